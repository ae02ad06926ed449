package dev.weft.dataplane;

import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 13, "Headers from the other side are not trusted", over real sockets: nothing an app sends can make a
 * sidecar retry, skip a limit or change its identity. (The inbound port itself, where a forged x-weft-caller could
 * come from outside the mesh, is the mTLS work's: the receiving side sets the caller from the peer's certificate.)
 */
class UntrustedHeadersSocketTest {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> post(int port, String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("order"));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static int served(TestApp app, String caller) {
        var n = app.servedByCaller.get(caller);
        return n == null ? 0 : n.get();
    }

    /** The port of a consumer sidecar's listener for provider. */
    private static int consumerPort(MeshFixture mesh, TestApp consumerApp) throws Exception {
        return MeshFixture.port(mesh.consumer(consumerApp.address(), List.of("provider"), false), "upstream provider");
    }

    private static void policy(MeshFixture mesh, Sidecar provider, String yaml) throws Exception {
        try (Registry registry = Registries.open(mesh.registryUrl(), mesh.operator())) {
            registry.putPolicy("trust", yaml);
        }
        await().atMost(Duration.ofSeconds(2)).until(() -> provider.policyStatus().equals("applied [trust]"));
    }

    @Test
    void anAppsUnprocessedMarkNeverMakesTheCallersSidecarSendAPostAgain() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp a1 = new TestApp(); TestApp a2 = new TestApp();
             TestApp consumerApp = new TestApp()) {
            for (TestApp a : List.of(a1, a2)) {
                a.forcedStatus = 503;
                a.forcedHeaders.put("x-weft-unprocessed", "true"); // "I did nothing, send it elsewhere": a lie
            }
            mesh.provider("provider", "p1", a1.address(), 1, 0);
            mesh.provider("provider", "p2", a2.address(), 1, 0);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            // Both instances known to the caller's sidecar: a retry would have somewhere else to go.
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                String config = get(MeshFixture.port(consumer, "admin"), "/config");
                return config.contains("\"p1\"") && config.contains("\"p2\"");
            });

            for (int i = 1; i <= 10; i++) {
                HttpResponse<String> r = post(port, "/orders");
                assertThat(r.statusCode()).isEqualTo(503);
                assertThat(r.body()).isEqualTo("forced 503");
                assertThat(r.headers().firstValue("x-weft-unprocessed")).as("the mark never leaves the app's hop")
                        .isEmpty();
                assertThat(served(a1, "consumer") + served(a2, "consumer")).as("each POST executed once").isEqualTo(i);
            }
            assertThat(served(a1, "consumer")).as("both instances answered, yet none was asked twice").isPositive();
            assertThat(served(a2, "consumer")).isPositive();
        }
    }

    @Test
    void noMeshFieldOfAnAppsAnswerReachesTheCaller() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp()) {
            app.forcedStatus = 503;
            app.forcedHeaders.put("x-weft-error", "no-capacity"); // passing itself off as the mesh shedding load
            app.forcedHeaders.put("x-weft-anything", "1");
            app.forcedHeaders.put("x-app-own", "kept");
            mesh.provider("provider", "p1", app.address(), 1, 0);
            int port = consumerPort(mesh, consumerApp);

            HttpResponse<String> r = post(port, "/orders");
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.body()).isEqualTo("forced 503");
            assertThat(r.headers().firstValue("x-weft-error")).as("the app's claim is dropped at its own hop").isEmpty();
            assertThat(r.headers().firstValue("x-weft-anything")).isEmpty();
            assertThat(r.headers().firstValue("x-app-own")).as("the app's own fields pass").contains("kept");
        }
    }

    @Test
    void anAppCannotSpeakForAnotherServiceOnTheOutboundSide() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 0);
            int port = consumerPort(mesh, consumerApp);

            assertThat(post(port, "/orders", "x-weft-caller", "web").statusCode()).isEqualTo(200);
            assertThat(app.headersOf("POST /orders").get("x-weft-caller")).as("the sidecar names its own service").containsExactly("consumer");
            assertThat(served(app, "web")).isZero();

            // Only web may call: consumer's app claiming to be web is still consumer, and denied.
            policy(mesh, provider, """
                    services:
                      provider:
                        authorization:
                          default: deny
                          rules: [{name: web-only, action: allow, from: [web]}]
                    """);
            HttpResponse<String> r = post(port, "/orders", "x-weft-caller", "web");
            assertThat(r.statusCode()).isEqualTo(403);
            assertThat(r.headers().firstValue("x-weft-error")).contains("forbidden");
            assertThat(served(app, "web")).isZero();
        }
    }

    @Test
    void anAppCannotSkipThePerCallerLimitByNamingAnotherCaller() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 0);
            int port = consumerPort(mesh, consumerApp);
            policy(mesh, provider, """
                    services:
                      provider:
                        rate-limit: {per-caller: 1, burst: 1}
                    """);

            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                // A fresh name each time: were it believed, each request would have a bucket of its own.
                statuses.add(post(port, "/orders", "x-weft-caller", "someone-" + i).statusCode());
            }
            assertThat(statuses.getFirst()).isEqualTo(200);
            assertThat(statuses.stream().filter(s -> s == 429).count()).as("statuses " + statuses)
                    .isGreaterThanOrEqualTo(3);
            assertThat(app.servedByCaller.keySet()).as("the app saw one caller").containsOnly("consumer");
        }
    }
}
