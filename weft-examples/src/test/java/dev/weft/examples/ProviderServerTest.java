package dev.weft.examples;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class ProviderServerTest {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private ProviderServer provider;

    @AfterEach
    void stop() {
        if (provider != null) {
            provider.close();
        }
        http.close();
    }

    private ProviderServer start(int maxConcurrency, long delayMs) throws InterruptedException {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "small",
                maxConcurrency, Duration.ofMillis(delayMs), 1));
        return provider;
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://" + HostPort.of(provider.address()) + pathAndQuery);
    }

    private HttpRequest post(String data) {
        return HttpRequest.newBuilder(uri("/")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(data, StandardCharsets.UTF_8)).build();
    }

    @Test
    void answersTheHashCodeOfThePostedDataAfterTheDelay() throws Exception {
        start(200, 50);
        long started = System.nanoTime();
        HttpResponse<String> response = http.send(post("hello weft"), HttpResponse.BodyHandlers.ofString());
        long elapsedMs = Duration.ofNanos(System.nanoTime() - started).toMillis();

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo(String.valueOf("hello weft".hashCode()));
        assertThat(response.headers().firstValue("x-provider")).contains("small");
        assertThat(elapsedMs).isGreaterThanOrEqualTo(50);
        assertThat(provider.stats().served()).isEqualTo(1);
    }

    @Test
    void hashesTheUtf8DecodedDataAndAcceptsItAsAQueryParameter() throws Exception {
        start(200, 0);
        String data = "données-数据";
        HttpResponse<String> posted = http.send(post(data), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> got = http.send(HttpRequest.newBuilder(
                        uri("/?data=" + URLEncoder.encode(data, StandardCharsets.UTF_8))).GET().build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(posted.body()).isEqualTo(String.valueOf(data.hashCode()));
        assertThat(got.body()).isEqualTo(String.valueOf(data.hashCode()));
    }

    @Test
    void refusesRequestsBeyondTheConcurrencyLimitWith503() throws Exception {
        start(2, 1_000);
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            held.add(http.sendAsync(post("held-" + i), HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> provider.stats().inFlight() == 2);

        HttpResponse<String> refused = http.send(post("one too many"), HttpResponse.BodyHandlers.ofString());

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.body()).contains("limit of 2");
        for (CompletableFuture<HttpResponse<String>> response : held) {
            assertThat(response.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        ProviderStats stats = provider.stats();
        assertThat(stats.served()).isEqualTo(2);
        assertThat(stats.rejected()).isEqualTo(1);
        assertThat(stats.inFlight()).isZero();
        assertThat(stats.maxInFlight()).isEqualTo(2);
    }

    @Test
    void reportsHealthAndStatsAsJson() throws Exception {
        start(200, 0);
        http.send(post("x"), HttpResponse.BodyHandlers.ofString());

        HttpResponse<String> health = http.send(HttpRequest.newBuilder(uri("/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> stats = http.send(HttpRequest.newBuilder(uri("/stats")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(stats.headers().firstValue("content-type")).contains("application/json");
        assertThat(stats.body()).isEqualTo(
                "{\"name\":\"small\",\"served\":1,\"rejected\":0,\"inFlight\":0,\"maxInFlight\":1}");
    }

    @Test
    void keepsTheConnectionOpenAndAnswersPipelinedRequestsInOrder() throws Exception {
        start(1, 100);
        try (RawHttp connection = new RawHttp(provider.address())) {
            // The second request is refused at once while the first is still delayed; it must still come second.
            connection.sendPost("first");
            connection.sendPost("second");
            RawHttp.Response first = connection.read();
            RawHttp.Response second = connection.read();
            connection.sendPost("third");
            RawHttp.Response third = connection.read();

            assertThat(first.status()).isEqualTo(200);
            assertThat(first.body()).isEqualTo(String.valueOf("first".hashCode()));
            assertThat(second.status()).isEqualTo(503);
            assertThat(third.status()).isEqualTo(200);
            assertThat(third.body()).isEqualTo(String.valueOf("third".hashCode()));
        }
    }

    @Test
    void freesTheSlotsOfClientsThatLeaveBeforeTheirAnswer() throws Exception {
        start(1, 500);
        try (RawHttp connection = new RawHttp(provider.address())) {
            connection.sendPost("abandoned");
            await().atMost(Duration.ofSeconds(5)).until(() -> provider.stats().inFlight() == 1);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> provider.stats().inFlight() == 0);

        HttpResponse<String> response = http.send(post("next"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(provider.stats().served()).isEqualTo(1);
    }

    @Test
    void answers404ForUnknownPaths() throws Exception {
        start(200, 0);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/nope")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.body()).contains("/nope");
    }
}
