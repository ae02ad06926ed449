package dev.weft.cli;

import dev.weft.bench.Experiment;
import dev.weft.bench.ExperimentResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A short run of {@code ./weft demo}: the real control plane, sidecars, providers and consumer as processes. */
class DemoTest {

    @Test
    void aShortDemoRunServesEveryRequestCorrectlyAcrossAllThreeProviders() throws Exception {
        ExperimentResult r = Experiment.run(Experiment.Settings.defaults()
                .withConnections(64)
                .withWarmup(Duration.ofSeconds(3))
                .withDuration(Duration.ofSeconds(5))
                .withStartTimeout(Duration.ofSeconds(60)));
        assertThat(r.load().requests()).isPositive();
        assertThat(r.load().successes()).isEqualTo(r.load().requests());
        assertThat(r.providers()).hasSize(3).allSatisfy(p -> assertThat(p.served()).isPositive());
        // Weighted 1:2:3: the large provider serves more than the small one.
        assertThat(r.providers().get(2).served()).isGreaterThan(r.providers().get(0).served());
    }
}
