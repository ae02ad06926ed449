package dev.weft.bench;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A tiny real bench run: the mesh and per-hop shapes with {@code direct} and nginx (real nginx, stand-in control
 * plane and sidecar from {@link FakeMeshCli}, which none of these planes needs). Checks that the files and columns
 * are there and that the figures agree with each other; never how large they are.
 */
class BenchTest {
    @TempDir
    Path results;

    @Test
    void writesEveryFileWithFiguresThatAgreeWithEachOther() throws Exception {
        Assumptions.assumeTrue(PeerDataPlane.onPath("nginx"), "nginx is not installed (apt-get install -y nginx)");
        Bench.Settings settings = new Bench.Settings(Set.of("mesh", "hop"), List.of("direct", "nginx"), List.of(8), 1,
                Duration.ofMillis(300), Duration.ofMillis(200), Duration.ofSeconds(30), Duration.ofSeconds(2), Duration.ofMillis(50), 4, Duration.ofSeconds(2), List.of(), 1,
                Generator.BUILTIN, ExperimentSettings.equalCapacities(200), List.of(), results, false,
                false, true, FakeMeshCli.class.getName(), System.err);

        BenchReport report = Bench.run(settings);

        assertThat(report.failures()).isEmpty();
        for (String file : List.of("summary.md", "rounds.csv", "mesh.csv", "hop.csv", "mesh-chart.svg", "bench.log")) {
            assertThat(results.resolve(file)).exists();
        }
        List<String> mesh = Files.readAllLines(results.resolve("mesh.csv"));
        assertThat(mesh.getFirst()).isEqualTo(String.join(",", BenchRow.CSV_HEADER));
        assertThat(mesh).hasSize(3);
        assertThat(Files.readString(results.resolve("mesh-chart.svg"))).contains(">direct<", ">nginx<");

        List<BenchRow> rows = report.rows();
        assertThat(rows).hasSize(4).allSatisfy(r -> {
            assertThat(r.errors()).isZero();
            assertThat(r.requests()).isPositive();
            assertThat(r.qps()).isPositive();
            assertThat(r.p50Ms()).isLessThanOrEqualTo(r.p99Ms());
            assertThat(r.p99Ms()).isLessThanOrEqualTo(r.maxMs());
            assertThat(r.machineBusyPct()).isBetween(0.0, 100.0);
            assertThat(r.generatorCpuUsPerReq()).isPositive();
            // The apps (the consumer and the providers, or the backend per hop) are read from /proc like the proxies.
            assertThat(r.appsCpuUsPerReq()).as("the apps' CPU").isNotNaN().isGreaterThanOrEqualTo(0);
        });
        for (BenchRow r : rows) {
            boolean proxied = r.plane().equals("nginx");
            // Only proxies have CPU, memory, readiness and a link between two proxy roles to count.
            assertThat(Double.isNaN(r.proxyCpuUsPerReq())).isEqualTo(!proxied);
            assertThat(Double.isNaN(r.rssConsumerMiB())).isEqualTo(!proxied);
            assertThat(Double.isNaN(r.linkBytesPerReq())).isEqualTo(!proxied);
            assertThat(Double.isNaN(r.readyMs())).isEqualTo(!proxied);
            assertThat(Double.isNaN(r.proxyCpuPerWork())).isEqualTo(!proxied);
            if (proxied) {
                // Read from /proc in 10 ms ticks: a few dozen requests through nginx can cost less than one.
                assertThat(r.proxyCpuUsPerReq()).isGreaterThanOrEqualTo(0);
                assertThat(r.proxyCpuPerWork()).isCloseTo(r.proxyCpuUsPerReq()
                        / (r.appsCpuUsPerReq() + r.generatorCpuUsPerReq()), org.assertj.core.data.Offset.offset(1e-9));
                // The link carries at least each request's and answer's bytes.
                assertThat(r.linkBytesPerReq()).isGreaterThan(LoadConnection.MIN_DATA);
            }
        }
        assertThat(Files.readString(results.resolve("summary.md"))).contains("## Mesh experiment", "## Per hop",
                "## Targets (issues 12 and 15)", "| nginx |");
        // Logs of clean runs are not kept unless asked.
        assertThat(results.resolve("logs")).isEmptyDirectory();
    }

    @Test
    void runsUnderWrkWithUnequalCapacitiesAndSaysEachRowsThreads() throws Exception {
        Assumptions.assumeTrue(PeerDataPlane.onPath("nginx"), "nginx is not installed (apt-get install -y nginx)");
        Assumptions.assumeTrue(PeerDataPlane.onPath("wrk"), "wrk is not installed (apt-get install -y wrk)");
        Bench.Settings settings = new Bench.Settings(Set.of("mesh"), List.of("direct", "nginx"), List.of(8), 1,
                Duration.ofSeconds(1), Duration.ZERO, Duration.ZERO, Duration.ofSeconds(1), Duration.ofMillis(50), 4, Duration.ofSeconds(1), List.of(), 1,
                Generator.WRK, List.of(10, 20, 30), List.of(1), results, false, false, true,
                FakeMeshCli.class.getName(), System.err);

        BenchReport report = Bench.run(settings);

        assertThat(report.failures()).isEmpty();
        assertThat(report.rows()).extracting(BenchRow::plane, BenchRow::threads)
                .containsExactlyInAnyOrder(tuple("direct", -1),
                        tuple("nginx", 1));
        assertThat(report.rows()).allSatisfy(r -> {
            assertThat(r.errors()).isZero();
            assertThat(r.qps()).isPositive();
            // Measured, not left out: /proc counts CPU in 10 ms ticks, and wrk's 1 s of 8 connections can use less
            // than one on a fast machine (0.0 seen in a fresh-clone run), so zero is a reading too.
            assertThat(r.generatorCpuUsPerReq()).as("wrk's own CPU").isNotNaN().isGreaterThanOrEqualTo(0);
        });
        String summary = Files.readString(results.resolve("summary.md"));
        assertThat(summary).contains("load generator (wrk)", "capacities 10/20/30 in flight", "| nginx | 1 | 8 |",
                "| direct |  | 8 |", "worker_processes 1");
        assertThat(Files.readAllLines(results.resolve("mesh.csv"))).anyMatch(l -> l.startsWith("mesh,nginx,1,1,8,"));
        assertThat(results.resolve(WrkGenerator.SCRIPT_FILE)).exists();
    }
}
