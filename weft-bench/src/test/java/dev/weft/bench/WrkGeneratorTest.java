package dev.weft.bench;

import com.sun.net.httpserver.HttpServer;
import dev.weft.examples.HostPort;
import dev.weft.examples.ProviderServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

/**
 * wrk's report and the script's lines become the same {@link LoadResult} the built-in generator fills; with wrk
 * installed, real runs check that the script's Java hash matches the example provider's on every answer and that a
 * wrong answer or a refusal is counted as the built-in generator counts it.
 */
class WrkGeneratorTest {
    @TempDir
    Path dir;

    private static final String REPORT = """
            # sh -c ... sh -t 2 -c 512 -d 20s --timeout 5s --latency -s wrk-verify-hash.lua http://127.0.0.1:4000/
            Running 20s test @ http://127.0.0.1:4000/
              2 threads and 512 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency    66.10ms   18.52ms   1.20s    88.01%
                Req/Sec     3.90k   400.12     4.50k    70.00%
              Latency Distribution
                 50%   61.02ms
                 75%   70.40ms
                 90%   84.00ms
                 99%  136.45ms
              155000 requests in 20.03s, 15.61MB read
              Socket errors: connect 0, read 3, write 1, timeout 2
              Non-2xx or 3xx responses: 12
            Requests/sec:   7738.39
            Transfer/sec:    797.91KB
            weft-wrk verified=154980 mismatches=8 responses=155000 duration_us=20031000
            weft-wrk status count=10 503 mesh no-capacity
            weft-wrk status count=2 502 front
            weft-wrk-shell-stat 4242 (sh) S 1 4242 4242 0 -1 4194304 88 3053 0 0 0 0 210 190 20 0 1 0 73563 2654208
            """;

    private static LoadGenerator.Settings settings(URI url, int connections) {
        return LoadGenerator.Settings.of(url).withConnections(connections).withThreads(1)
                .withDuration(Duration.ofSeconds(1)).withServiceDelay(Duration.ZERO).withProgress(null);
    }

    @Test
    void wrksReportAndTheScriptsLinesBecomeTheBuiltInGeneratorsResult() {
        LoadGenerator.Settings load = settings(URI.create("http://127.0.0.1:4000/"), 512)
                .withServiceDelay(Duration.ofMillis(50));
        LoadResult result = WrkGenerator.parse(REPORT, dir.resolve("wrk.log")).toLoadResult(load, 2);

        assertThat(result.successes()).isEqualTo(154_980);
        assertThat(result.errors().wrongBody()).as("200s with a wrong body").isEqualTo(8);
        assertThat(result.errors().byStatus()).containsEntry(503, 10L).containsEntry(502, 2L);
        assertThat(result.errors().byOrigin()).containsEntry("503 mesh no-capacity", 10L)
                .containsEntry("502 front", 2L);
        assertThat(result.errors().connection()).as("read + write").isEqualTo(4);
        assertThat(result.errors().timeout()).isEqualTo(2);
        assertThat(result.requests()).isEqualTo(result.successes() + result.errors().total());
        assertThat(result.measured()).isEqualTo(Duration.ofMillis(20_031));
        assertThat(result.qps()).isCloseTo(154_980 / 20.031, offset(1e-6));
        assertThat(result.latency().p50Ms()).isEqualTo(61.02);
        assertThat(result.latency().p90Ms()).isEqualTo(84.0);
        assertThat(result.latency().p99Ms()).isEqualTo(136.45);
        assertThat(result.latency().maxMs()).isEqualTo(1200.0);
        assertThat(result.latency().samples()).as("wrk's latency covers every answer").isEqualTo(155_000);
        assertThat(result.threads()).isEqualTo(2);
        assertThat(result.cpu()).as("the shell's cutime + cstime: 400 ticks").isEqualTo(Duration.ofSeconds(4));
        assertThat(result.ceilingQps()).isEqualTo(512 / 0.05);
        assertThat(WrkGenerator.parse(REPORT, dir.resolve("wrk.log")).non2xx()).isEqualTo(12);
    }

    @Test
    void wrksTimesAreReadInEveryUnitItPrints() {
        assertThat(WrkGenerator.millis("493.00", "us")).isEqualTo(0.493);
        assertThat(WrkGenerator.millis("1.50", "s")).isEqualTo(1500.0);
        assertThat(WrkGenerator.millis("1.00", "m")).isEqualTo(60_000.0);
    }

    @Test
    void anOutputWithoutTheScriptsLineIsAnErrorNamingTheLog() {
        String withoutScript = REPORT.lines().filter(l -> !l.startsWith("weft-wrk verified"))
                .reduce("", (a, b) -> a + b + "\n");
        assertThatThrownBy(() -> WrkGenerator.parse(withoutScript, dir.resolve("wrk-512-measured.log")))
                .hasMessageContaining("no line from the script's done()")
                .hasMessageContaining("wrk-512-measured.log");
    }

    @Test
    void wrkTakesWholeSecondsSoShorterDurationsAreRoundedUp() {
        List<String> command = WrkGenerator.command(settings(URI.create("http://127.0.0.1:1/"), 8)
                .withDuration(Duration.ofMillis(1500)), 1, Duration.ofMillis(1500), dir.resolve("s.lua"));
        assertThat(String.join(" ", command)).contains(" -t 1 -c 8 -d 2s --timeout 5s --latency -s ")
                .endsWith("http://127.0.0.1:1/");
    }

    @Test
    void everyAnswerOfTheExampleProviderIsVerifiedAndWrksCpuIsReported() throws Exception {
        Assumptions.assumeTrue(PeerDataPlane.onPath("wrk"), "wrk is not installed (apt-get install -y wrk)");
        try (ProviderServer provider = ProviderServer.start(new ProviderServer.Settings(
                new HostPort("127.0.0.1", 0), "tiny", 10_000, Duration.ZERO, 1))) {
            List<String> phases = new ArrayList<>();
            LoadResult result = WrkGenerator.run(settings(URI.create("http://" + HostPort.of(provider.address()) + "/"),
                    8).withWarmup(Duration.ofSeconds(1)), new LoadGenerator.PhaseListener() {
                        @Override
                        public void measurementStarting() {
                            phases.add("starting");
                        }

                        @Override
                        public void measurementEnded() {
                            phases.add("ended");
                        }
                    }, dir);

            assertThat(result.errors().total()).as(result.errors().describe()).isZero();
            assertThat(result.successes()).isPositive().isEqualTo(result.requests())
                    .isEqualTo(result.latency().samples());
            assertThat(result.cpu()).as("wrk's own CPU").isPositive();
            assertThat(result.latency().p50Ms()).isPositive().isLessThanOrEqualTo(result.latency().p99Ms());
            assertThat(phases).containsExactly("starting", "ended");
            assertThat(dir.resolve(WrkGenerator.SCRIPT_FILE)).exists();
            assertThat(dir.resolve("wrk-8-warmup.log")).exists();
            assertThat(dir.resolve("wrk-8-measured.log")).content().startsWith("# sh -c ")
                    .contains("weft-wrk verified=" + result.successes() + " mismatches=0");
        }
    }

    @Test
    void answersWithTheWrongHashAreCountedAsWrongBody() throws Exception {
        Assumptions.assumeTrue(PeerDataPlane.onPath("wrk"), "wrk is not installed (apt-get install -y wrk)");
        HttpServer liar = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        liar.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] body = "42".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        liar.start();
        try {
            LoadResult result = WrkGenerator.run(settings(URI.create("http://127.0.0.1:"
                    + liar.getAddress().getPort() + "/"), 4), new LoadGenerator.PhaseListener() {}, dir);

            assertThat(result.successes()).isZero();
            assertThat(result.errors().wrongBody()).isPositive();
            assertThat(result.errors().describe()).contains("wrong body: " + result.errors().wrongBody());
        } finally {
            liar.stop(0);
        }
    }

    @Test
    void theProvidersBackPressureIsCountedByStatusAndOrigin() throws Exception {
        Assumptions.assumeTrue(PeerDataPlane.onPath("wrk"), "wrk is not installed (apt-get install -y wrk)");
        try (ProviderServer provider = ProviderServer.start(new ProviderServer.Settings(
                new HostPort("127.0.0.1", 0), "tiny", 2, Duration.ofMillis(50), 1))) {
            LoadResult result = WrkGenerator.run(settings(URI.create("http://" + HostPort.of(provider.address()) + "/"),
                    8), new LoadGenerator.PhaseListener() {}, dir);

            assertThat(result.errors().byOrigin()).containsOnlyKeys("503 provider tiny");
            assertThat(result.errors().byStatus().get(503)).isPositive();
            assertThat(result.successes()).isPositive();
            assertThat(result.errors().wrongBody()).isZero();
        }
    }
}
