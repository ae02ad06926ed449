package dev.weft.dataplane.transport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * The CPU limit the kernel enforces on this process through its cgroup: the CFS quota divided by its period,
 * rounded up to whole CPUs (a quota of 1.5 CPUs is 2). Empty when there is no quota, or on a machine without
 * cgroups. Read once, at start: nothing here is on a hot path.
 *
 * <ul>
 *   <li>cgroup v2: {@code cpu.max} holds {@code QUOTA PERIOD} in microseconds, {@code max PERIOD} for no limit;</li>
 *   <li>cgroup v1: {@code cpu.cfs_quota_us} ({@code -1} for no limit) and {@code cpu.cfs_period_us}.</li>
 * </ul>
 *
 * The process's own cgroup is named in {@code /proc/self/cgroup}. A quota on any ancestor limits it too, so every
 * level from that cgroup up to the mount point is read and the smallest quota wins. Inside a container the mount
 * point is usually the container's own cgroup, whose files then sit right at the mount point.
 *
 * <p>The JDK's container support reads the same files for {@code Runtime.availableProcessors()}; reading them here
 * keeps the sidecar's choice of Workers visible and testable, and independent of {@code -XX:ActiveProcessorCount}.
 */
public final class CgroupCpuLimit {
    private static final Path UNIFIED = Path.of("sys/fs/cgroup");
    /** Where v1's cpu controller is mounted on Debian, systemd and Docker hosts (the joint name is a symlink on some). */
    private static final List<Path> V1_MOUNTS = List.of(Path.of("sys/fs/cgroup/cpu"),
            Path.of("sys/fs/cgroup/cpu,cpuacct"));

    private final Path root;

    /** @param root the file system root: {@code /} in production, a folder of sample files in tests */
    CgroupCpuLimit(Path root) {
        this.root = root;
    }

    /** This process's limit, from the real {@code /proc} and {@code /sys}. */
    public static OptionalInt ofThisProcess() {
        return new CgroupCpuLimit(Path.of("/")).cpus();
    }

    /** Whole CPUs the quota allows, rounded up; empty when no level of this process's cgroup has a quota. */
    OptionalInt cpus() {
        String self = read(root.resolve("proc/self/cgroup"));
        if (self == null) {
            return OptionalInt.empty();
        }
        OptionalInt v2 = v2(self);
        return v2.isPresent() ? v2 : v1(self);
    }

    private OptionalInt v2(String selfCgroup) {
        String path = cgroupPath(selfCgroup, true);
        if (path == null) {
            return OptionalInt.empty();
        }
        Path mount = root.resolve(UNIFIED);
        return smallest(mount, path, dir -> parseCpuMax(read(dir.resolve("cpu.max"))));
    }

    private OptionalInt v1(String selfCgroup) {
        String path = cgroupPath(selfCgroup, false);
        if (path == null) {
            return OptionalInt.empty();
        }
        for (Path mount : V1_MOUNTS) {
            Path dir = root.resolve(mount);
            if (Files.isDirectory(dir)) {
                return smallest(dir, path, d -> parseCfs(read(d.resolve("cpu.cfs_quota_us")),
                        read(d.resolve("cpu.cfs_period_us"))));
            }
        }
        return OptionalInt.empty();
    }

    /** The smallest limit found on {@code mount/path} and each of its ancestors up to {@code mount} itself. */
    private static OptionalInt smallest(Path mount, String path, Function<Path, OptionalInt> limit) {
        Path dir = mount.resolve(path.replaceFirst("^/+", "")).normalize();
        if (!dir.startsWith(mount)) {
            dir = mount;
        }
        OptionalInt best = OptionalInt.empty();
        while (true) {
            OptionalInt here = limit.apply(dir);
            if (here.isPresent() && (best.isEmpty() || here.getAsInt() < best.getAsInt())) {
                best = here;
            }
            if (dir.equals(mount)) {
                return best;
            }
            dir = dir.getParent();
        }
    }

    /**
     * The cgroup path in {@code /proc/self/cgroup}: the {@code 0::PATH} line for v2, the line whose controllers
     * include {@code cpu} for v1 ({@code 4:cpu,cpuacct:/PATH}); null when there is none.
     */
    static String cgroupPath(String selfCgroup, boolean unified) {
        for (String line : selfCgroup.split("\n")) {
            String[] f = line.trim().split(":", 3);
            if (f.length < 3) {
                continue;
            }
            if (unified ? f[0].equals("0") && f[1].isEmpty() : List.of(f[1].split(",")).contains("cpu")) {
                return f[2];
            }
        }
        return null;
    }

    /** {@code "150000 100000"} is 2 CPUs (1.5 rounded up); {@code "max 100000"}, blank or malformed is no limit. */
    static OptionalInt parseCpuMax(String cpuMax) {
        if (cpuMax == null) {
            return OptionalInt.empty();
        }
        String[] f = cpuMax.trim().split("\\s+");
        if (f[0].equals("max")) {
            return OptionalInt.empty();
        }
        // The period is optional when written (it defaults to 100 ms) and always there when read.
        return cpus(f[0], f.length > 1 ? f[1] : "100000");
    }

    /** v1: a quota of {@code -1} (or none) is no limit. */
    static OptionalInt parseCfs(String quota, String period) {
        if (quota == null || period == null) {
            return OptionalInt.empty();
        }
        return cpus(quota.trim(), period.trim());
    }

    private static OptionalInt cpus(String quota, String period) {
        try {
            long q = Long.parseLong(quota);
            long p = Long.parseLong(period);
            if (q <= 0 || p <= 0) {
                return OptionalInt.empty();
            }
            return OptionalInt.of((int) Math.min(Integer.MAX_VALUE, (q + p - 1) / p));
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }

    private static String read(Path file) {
        try {
            return Files.isReadable(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
