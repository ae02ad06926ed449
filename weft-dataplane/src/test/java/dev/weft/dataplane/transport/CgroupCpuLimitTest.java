package dev.weft.dataplane.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;

import static org.assertj.core.api.Assertions.assertThat;

/** The cgroup files are samples written into a temporary root; no real cgroup is read. */
class CgroupCpuLimitTest {
    @TempDir
    Path root;

    private void write(String file, String content) throws IOException {
        Path path = root.resolve(file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, content);
    }

    private OptionalInt limit() {
        return new CgroupCpuLimit(root).cpus();
    }

    @Test
    void aV2QuotaIsRoundedUpToWholeCpus() throws IOException {
        write("proc/self/cgroup", "0::/\n");
        write("sys/fs/cgroup/cpu.max", "150000 100000\n");
        assertThat(limit()).hasValue(2);
    }

    @Test
    void aV2MaxMeansNoLimit() throws IOException {
        write("proc/self/cgroup", "0::/\n");
        write("sys/fs/cgroup/cpu.max", "max 100000\n");
        assertThat(limit()).isEmpty();
    }

    @Test
    void theSmallestQuotaOnTheWayUpFromTheProcesssOwnCgroupWins() throws IOException {
        write("proc/self/cgroup", "0::/kubepods/pod1/sidecar\n");
        write("sys/fs/cgroup/kubepods/cpu.max", "800000 100000\n");
        write("sys/fs/cgroup/kubepods/pod1/cpu.max", "50000 100000\n");
        write("sys/fs/cgroup/kubepods/pod1/sidecar/cpu.max", "max 100000\n");
        assertThat(limit()).hasValue(1);
    }

    @Test
    void aV1QuotaIsReadFromTheCpuController() throws IOException {
        write("proc/self/cgroup", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n");
        write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
        write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
        assertThat(limit()).hasValue(3);
    }

    @Test
    void aV1QuotaOfMinusOneMeansNoLimit() throws IOException {
        // A hybrid host, like this project's machines: v2 is mounted aside with no cpu controller, v1 has it.
        write("proc/self/cgroup", "1:cpu:/\n0::/\n");
        write("sys/fs/cgroup/unified/cgroup.procs", "");
        write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
        write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
        assertThat(limit()).isEmpty();
    }

    @Test
    void aContainerWhoseCgroupIsMountedAtTheRootFindsItsQuotaThere() throws IOException {
        // Without a cgroup namespace the path names the host's cgroup, which the container sees as its mount point.
        write("proc/self/cgroup", "0::/system.slice/docker-abc.scope\n");
        write("sys/fs/cgroup/cpu.max", "100000 100000\n");
        assertThat(limit()).hasValue(1);
    }

    @Test
    void noCgroupFilesMeansNoLimit() {
        assertThat(limit()).isEmpty();
    }

    @Test
    void malformedFilesAreNoLimitRatherThanAnError() {
        assertThat(CgroupCpuLimit.parseCpuMax("")).isEmpty();
        assertThat(CgroupCpuLimit.parseCpuMax("lots 100000")).isEmpty();
        assertThat(CgroupCpuLimit.parseCpuMax("200000")).as("the period defaults to 100 ms").hasValue(2);
        assertThat(CgroupCpuLimit.parseCfs("0", "100000")).isEmpty();
        assertThat(CgroupCpuLimit.parseCfs("100000", "x")).isEmpty();
    }

    @Test
    void theDefaultWorkersAreTwoAtMostAndFollowTheCpuLimit() {
        assertThat(Transport.defaultWorkers(OptionalInt.empty(), 64)).isEqualTo(2);
        assertThat(Transport.defaultWorkers(OptionalInt.empty(), 1)).isEqualTo(1);
        assertThat(Transport.defaultWorkers(OptionalInt.of(1), 64)).isEqualTo(1);
        assertThat(Transport.defaultWorkers(OptionalInt.of(4), 64)).isEqualTo(2);
        assertThat(Transport.defaultWorkers(OptionalInt.of(8), 1)).as("a quota above the CPUs available").isEqualTo(1);
    }
}
