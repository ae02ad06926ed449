package dev.weft.bench;

import dev.weft.examples.HostPort;
import dev.weft.examples.ProviderServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LoadGeneratorTest {
    private ProviderServer provider;

    @AfterEach
    void stop() {
        if (provider != null) {
            provider.close();
        }
    }

    @Test
    void verifiesEveryAnswerOfARealProviderAndCountsRequestsConsistently() throws Exception {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "small", 200,
                Duration.ofMillis(10), 1));
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        LoadGenerator.Settings settings = LoadGenerator.Settings.of(url(provider))
                .withConnections(16)
                .withThreads(1)
                .withWarmup(Duration.ofMillis(500))
                .withDuration(Duration.ofSeconds(2))
                .withServiceDelay(Duration.ofMillis(10))
                .withProgress(new PrintStream(progress, true, StandardCharsets.UTF_8));
        long servedBefore = provider.stats().served();

        LoadResult result = LoadGenerator.run(settings);

        assertThat(result.errors().total()).as(result.errors().describe()).isZero();
        assertThat(result.successes()).isPositive();
        assertThat(result.requests()).isEqualTo(result.successes() + result.errors().total());
        assertThat(result.latency().samples()).isEqualTo(result.successes());
        assertThat(result.latency().p50Ms()).isPositive();
        assertThat(result.latency().maxMs()).isGreaterThanOrEqualTo(result.latency().p99Ms());
        assertThat(result.qps()).isPositive();
        assertThat(result.qps()).isCloseTo(result.successes() / (result.measured().toNanos() / 1e9), within(1e-6));
        // Warm-up and the requests in flight at the end were served but not counted.
        assertThat(provider.stats().served() - servedBefore).isGreaterThanOrEqualTo(result.successes());
        assertThat(result.ceilingQps()).isEqualTo(1600.0);
        assertThat(result.cpu()).isPositive();
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("warm-up").contains("measuring");
        assertThat(result.describe()).contains("QPS").contains("p99").contains("errors         none");
    }

    private static URI url(ProviderServer server) {
        return URI.create("http://" + HostPort.of(server.address()) + "/");
    }
}
