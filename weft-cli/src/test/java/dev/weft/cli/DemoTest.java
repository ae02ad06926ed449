package dev.weft.cli;

import dev.weft.bench.Experiment;
import dev.weft.bench.ExperimentResult;
import dev.weft.bench.ExperimentSettings;
import dev.weft.bench.SteadyCheck;
import dev.weft.bench.WeftDataPlane;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Short runs of {@code ./weft demo}: the real control plane, sidecars, providers and consumer as processes, with the
 * demo's data plane (strict mTLS, a join token per sidecar). One topology serves every test: each measures a load of
 * its own on it, and none changes it (starting it takes about 12 s on this machine, more than any one test's load).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DemoTest {
    private Path run;
    private Experiment experiment;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        run = dir.resolve("demo");
        experiment = Experiment.start(ExperimentSettings.defaults().withDataPlane(WeftDataPlane.demo())
                .withRunDir(run).withKeepLogs(true).withStartTimeout(Duration.ofSeconds(60)));
        // The topology's first requests (each sidecar's first mTLS dials, cold code on nine cold JVMs) are not what any
        // test here is about. On a loaded machine they took over the generator's 5 s timeout while the first test's 2 s
        // warm-up was already over (4 of 121 in a fresh-clone run at load ~20), whichever test came first. This load is
        // not measured: each test still requires every request of its own window to succeed.
        experiment.measure(8, Duration.ZERO, Duration.ofSeconds(4));
    }

    @AfterAll
    void stop() {
        if (experiment != null) {
            experiment.close();
        }
    }

    @Test
    void aShortDemoRunServesEveryRequestCorrectlyAcrossAllThreeProviders() throws Exception {
        ExperimentResult r = experiment.measure(64, Duration.ofSeconds(3), Duration.ofSeconds(5));
        assertThat(r.load().requests()).isPositive();
        assertThat(r.load().successes()).isEqualTo(r.load().requests());
        assertThat(r.providers()).hasSize(3).allSatisfy(p -> assertThat(p.served()).isPositive());
        // No assertion on the weights' shares: the default balancer (p2c-peak-ewma) divides its cost by the weight but
        // follows measured latency, and in 5 s of 64 connections on cold JVMs the large provider served fewer requests
        // than the small one once in a fresh-clone CI run (566 against 597). The shares are measured, over longer
        // loads, in the bench's "off weights" column and the resilience bench's unequal scenario.
    }

    /**
     * The demo's steady-state check (issue 15), as {@code DemoCommand} runs it, shortened: its verdict compares two
     * windows that were both measured on the running topology, the second after more unrecorded load.
     */
    @Test
    void theSteadyStateVerdictComparesTwoMeasuredWindowsOfTheSameTopology() throws Exception {
        Duration window = Duration.ofSeconds(3);
        ExperimentResult first = experiment.measureAfterWarmUp(32, Duration.ofSeconds(2), window).result();
        SteadyCheck check = experiment.measureAgain(first, Duration.ofSeconds(2), window);

        assertThat(check.first()).isSameAs(first.load());
        assertThat(check.again()).isNotSameAs(check.first());
        for (var w : List.of(check.first(), check.again())) {
            assertThat(w.successes()).isPositive().isEqualTo(w.requests());
            assertThat(w.measured()).isBetween(window.minusMillis(500), window.plusSeconds(1));
            assertThat(w.qps()).isCloseTo(w.successes() / (w.measured().toNanos() / 1e9),
                    org.assertj.core.data.Offset.offset(1e-6));
        }
        // The second window came after its own unrecorded load of the gap, not straight after the first.
        assertThat(check.again().warmup()).isBetween(Duration.ofMillis(1_900), Duration.ofSeconds(4));
        assertThat(check.ratio()).isCloseTo(check.first().qps() / check.again().qps(),
                org.assertj.core.data.Offset.offset(1e-12));
        assertThat(check.steady()).isEqualTo(Math.abs(check.ratio() - 1) <= SteadyCheck.WITHIN);
        assertThat(check.describe()).contains("measured again after another 2s of load")
                .contains(String.format(java.util.Locale.ROOT, "%.1f%%", check.ratio() * 100));
    }

    /** Issue 13: the demo's sidecars run strict, each with its own join token. */
    @Test
    void theDemosSidecarsRunStrictWithAJoinTokenEachAndServeEveryRequest() throws Exception {
        ExperimentResult r = experiment.measure(32, Duration.ofSeconds(2), Duration.ofSeconds(3));

        assertThat(r.load().requests()).isPositive();
        assertThat(r.load().successes()).as(r.load().errors().describe()).isEqualTo(r.load().requests());
        for (String sidecar : List.of("sidecar-consumer", "sidecar-provider-small", "sidecar-provider-large")) {
            String commandLine = Files.readAllLines(run.resolve(sidecar + ".log")).getFirst();
            assertThat(commandLine).contains("--mtls strict --token-file " + run.resolve(sidecar + ".token"));
        }
    }
}
