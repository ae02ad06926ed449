package dev.weft.examples;

import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ConsumerServerTest {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private ProviderServer provider;
    private ConsumerServer consumer;

    @AfterEach
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        if (provider != null) {
            provider.close();
        }
        http.close();
    }

    private void startProvider(long delayMs) throws InterruptedException {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "medium", 200,
                Duration.ofMillis(delayMs), 1));
    }

    private void startConsumer(URI providerUrl, Duration timeout) throws InterruptedException {
        consumer = ConsumerServer.start(new ConsumerServer.Settings(new HostPort("127.0.0.1", 0), providerUrl, 64,
                timeout, 2));
    }

    private URI providerUrl() {
        return URI.create("http://" + HostPort.of(provider.address()));
    }

    private HttpResponse<String> call(String data) throws Exception {
        return http.send(post(data), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest post(String data) {
        return HttpRequest.newBuilder(URI.create("http://" + HostPort.of(consumer.address()) + "/"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(data)).build();
    }

    @Test
    void returnsTheProvidersHashWhenCallingItDirectly() throws Exception {
        startProvider(50);
        startConsumer(providerUrl(), Duration.ofSeconds(5));

        HttpResponse<String> response = call("abcXYZ123");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo(String.valueOf("abcXYZ123".hashCode()));
        assertThat(response.headers().firstValue("x-provider")).contains("medium");
    }

    @Test
    void servesManyConcurrentRequestsOverItsConnectionPool() throws Exception {
        startProvider(20);
        startConsumer(providerUrl(), Duration.ofSeconds(5));

        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            responses.add(http.sendAsync(post("data-" + i), HttpResponse.BodyHandlers.ofString()));
        }

        for (int i = 0; i < responses.size(); i++) {
            HttpResponse<String> response = responses.get(i).get(30, TimeUnit.SECONDS);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo(String.valueOf(("data-" + i).hashCode()));
        }
        assertThat(provider.stats().served()).isEqualTo(100);
    }

    @Test
    void answers502WithAOneLineReasonWhenTheProviderIsDown() throws Exception {
        // Held until the calls are answered: a port picked and closed could be taken by another bind meanwhile.
        try (HeldPort dead = LoopbackPorts.held()) {
            URI deadProvider = URI.create("http://127.0.0.1:" + dead.port());
            startConsumer(deadProvider, Duration.ofSeconds(5));

            HttpResponse<String> first = call("anything");
            HttpResponse<String> second = call("again");

            assertThat(first.statusCode()).isEqualTo(502);
            assertThat(first.body()).startsWith("consumer: cannot connect to provider " + deadProvider)
                    .doesNotContain("\n");
            assertThat(second.statusCode()).isEqualTo(502);
        }
    }

    @Test
    void answers504WhenTheProviderIsSlowerThanTheTimeout() throws Exception {
        startProvider(2_000);
        startConsumer(providerUrl(), Duration.ofMillis(200));

        HttpResponse<String> response = call("slow");

        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(response.body()).contains("did not answer within 200 ms");
    }

    @Test
    void answersHealthChecksWithoutCallingTheProvider() throws Exception {
        startConsumer(URI.create("http://127.0.0.1:1"), Duration.ofSeconds(1));

        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://" + HostPort.of(consumer.address()) + "/health")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
    }

    @Test
    void keepsItsClientConnectionOpenAcrossRequests() throws IOException, InterruptedException {
        startProvider(0);
        startConsumer(providerUrl(), Duration.ofSeconds(5));
        try (RawHttp connection = new RawHttp(consumer.address())) {
            for (int i = 0; i < 3; i++) {
                connection.sendPost("again-" + i);
                assertThat(connection.read().body()).isEqualTo(String.valueOf(("again-" + i).hashCode()));
            }
            // Pipelined: both answers arrive, in order.
            connection.sendPost("p1");
            connection.sendPost("p2");
            assertThat(connection.read().body()).isEqualTo(String.valueOf("p1".hashCode()));
            assertThat(connection.read().body()).isEqualTo(String.valueOf("p2".hashCode()));
        }
    }

    @Test
    void traceContextHeadersArePassedOnToTheProviderSoItsSideJoinsTheTrace() throws Exception {
        com.sun.net.httpserver.HttpServer echo = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 16);
        echo.createContext("/", ex -> {
            ex.getRequestBody().readAllBytes();
            byte[] body = (ex.getRequestHeaders().getFirst("traceparent") + "|" + ex.getRequestHeaders().getFirst("b3")
                    + "|" + ex.getRequestHeaders().getFirst("x-other")).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        echo.start();
        try {
            startConsumer(URI.create("http://127.0.0.1:" + echo.getAddress().getPort()), Duration.ofSeconds(5));
            String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + HostPort.of(consumer.address()) + "/"))
                    .timeout(Duration.ofSeconds(10)).header("traceparent", traceparent).header("x-other", "kept-here")
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(traceparent + "|null|null");
        } finally {
            echo.stop(0);
        }
    }

    @Test
    void anInjectedErrorRateIsAnsweredByTheConsumerItselfAndBadFaultsAreRefused() throws Exception {
        startProvider(1);
        startConsumer(providerUrl(), Duration.ofSeconds(5));
        String fault = "http://" + HostPort.of(consumer.address()) + "/fault";
        HttpResponse<String> set = http.send(HttpRequest.newBuilder(URI.create(fault + "?error-rate=1"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(set.statusCode()).isEqualTo(200);
        assertThat(set.body()).contains("\"errorRate\":1.0");
        HttpResponse<String> failed = call("x");
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.body()).isEqualTo("injected fault at consumer");
        assertThat(provider.stats().toJson()).as("the provider was not called").contains("\"served\":0");
        for (String bad : List.of("?error-rate=2", "?factor=10")) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(fault + bad))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(bad).isEqualTo(400);
        }
        http.send(HttpRequest.newBuilder(URI.create(fault + "?error-rate=0")).POST(HttpRequest.BodyPublishers.noBody())
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(call("x").statusCode()).isEqualTo(200);
    }
}
