package dev.weft.cli;

import dev.weft.bench.Experiment;
import dev.weft.bench.ExperimentSettings;
import dev.weft.bench.ExperimentResult;
import dev.weft.bench.SteadyCheck;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A short run of {@code ./weft demo}: the real control plane, sidecars, providers and consumer as processes. */
class DemoTest {

    @Test
    void aShortDemoRunServesEveryRequestCorrectlyAcrossAllThreeProviders() throws Exception {
        ExperimentResult r = Experiment.run(ExperimentSettings.defaults()
                .withConnections(64)
                .withWarmup(Duration.ofSeconds(3))
                .withDuration(Duration.ofSeconds(5))
                .withStartTimeout(Duration.ofSeconds(60)));
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
        try (Experiment experiment = Experiment.start(ExperimentSettings.defaults().withConnections(32)
                .withStartTimeout(Duration.ofSeconds(60)))) {
            ExperimentResult first = experiment.measureAfterWarmUp(32, Duration.ofSeconds(2), window).result();
            SteadyCheck check = experiment.measureAgain(first, Duration.ofSeconds(2), window);

            assertThat(check.first()).isSameAs(first.load());
            assertThat(check.again()).isNotSameAs(check.first());
            for (var w : java.util.List.of(check.first(), check.again())) {
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
    }
}
