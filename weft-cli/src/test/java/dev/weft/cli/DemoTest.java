package dev.weft.cli;

import dev.weft.bench.Experiment;
import dev.weft.bench.ExperimentSettings;
import dev.weft.bench.ExperimentResult;
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
}
