package dev.weft.registry.weft;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The client's watch rules against a scripted fake control plane (the JDK's HTTP server), where the real one
 * could not misbehave on cue: repeated snapshots, silent streams, nobody listening.
 */
class WeftRegistryClientTest {
    private HttpServer server;
    private final CountDownLatch release = new CountDownLatch(1);
    private final List<String> watchRequests = new CopyOnWriteArrayList<>();
    /** One script per watch connection, in order: the lines to send before holding the stream open. */
    private final BlockingQueue<List<String>> scripts = new LinkedBlockingQueue<>();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private static final String HANG = "<hang before the response headers>";
    /**
     * How long a wait for something the client must do may last. Each wait ends as soon as its condition holds (in
     * milliseconds on a quiet machine); 2 s was too short under a heavily loaded machine's scheduling delays.
     */
    private static final Duration WAIT = Duration.ofSeconds(15);

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeAfter.reversed()) {
            c.close();
        }
        release.countDown();
        if (server != null) {
            server.stop(0);
        }
    }

    private int startFakeControlPlane() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/watch/", this::watch);
        server.start();
        return server.getAddress().getPort();
    }

    private void watch(HttpExchange exchange) throws IOException {
        watchRequests.add(exchange.getRequestURI().toString());
        List<String> script = scripts.poll();
        if (script != null && script.equals(List.of(HANG))) {
            try {
                release.await(60, TimeUnit.SECONDS);   // accept the request, never answer it (until the test ends)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        exchange.getResponseHeaders().add("Content-Type", "application/x-ndjson");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream body = exchange.getResponseBody()) {
            for (String line : script == null ? List.<String>of() : script) {
                body.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                body.flush();
            }
            release.await(60, TimeUnit.SECONDS);   // hold the stream open, silent (until the test ends)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client went away
        }
    }

    private static String snapshot(long revision, String... ids) {
        StringBuilder eps = new StringBuilder();
        for (String id : ids) {
            if (!eps.isEmpty()) {
                eps.append(',');
            }
            eps.append("{\"service\":\"provider\",\"id\":\"").append(id)
                    .append("\",\"host\":\"127.0.0.1\",\"port\":7001,\"weight\":1,\"capacity\":0,\"metadata\":{}}");
        }
        return "{\"type\":\"snapshot\",\"service\":\"provider\",\"revision\":" + revision + ",\"endpoints\":[" + eps + "]}";
    }

    private WeftRegistry client(int port, Duration silenceLimit) {
        WeftRegistry registry = new WeftRegistry(URI.create("weft://127.0.0.1:" + port), silenceLimit);
        closeAfter.add(registry);
        return registry;
    }

    private static List<String> ids(List<Endpoint> endpoints) {
        return endpoints.stream().map(Endpoint::id).toList();
    }

    @Test
    void a_snapshot_equal_to_the_last_one_delivered_is_not_delivered_again() throws Exception {
        scripts.add(List.of(snapshot(1, "a"), "{\"type\":\"heartbeat\"}", snapshot(2, "a"), snapshot(3, "a", "b")));
        WeftRegistry registry = client(startFakeControlPlane(), Duration.ofSeconds(7));
        List<List<String>> seen = new CopyOnWriteArrayList<>();

        registry.watch("provider", (service, endpoints) -> seen.add(ids(endpoints)));

        await().atMost(WAIT).untilAsserted(() -> assertThat(seen).hasSize(2));
        assertThat(seen).containsExactly(List.of("a"), List.of("a", "b"));
    }

    @Test
    void a_stream_that_falls_silent_is_reopened_from_the_last_revision_seen() throws Exception {
        scripts.add(List.of(snapshot(5, "a")));
        WeftRegistry registry = client(startFakeControlPlane(), Duration.ofMillis(300));
        List<List<String>> seen = new CopyOnWriteArrayList<>();

        registry.watch("provider", (service, endpoints) -> seen.add(ids(endpoints)));

        await().atMost(WAIT).untilAsserted(() -> assertThat(watchRequests).hasSizeGreaterThan(1));
        assertThat(watchRequests.getFirst()).isEqualTo("/v1/watch/provider");
        assertThat(watchRequests.get(1)).isEqualTo("/v1/watch/provider?revision=5");
        assertThat(seen).containsExactly(List.of("a"));
    }

    @Test
    void a_watch_request_that_never_gets_an_answer_is_abandoned_and_retried() throws Exception {
        scripts.add(List.of(HANG));
        scripts.add(List.of(snapshot(2, "a")));
        WeftRegistry registry = client(startFakeControlPlane(), Duration.ofMillis(300));
        List<List<String>> seen = new CopyOnWriteArrayList<>();

        registry.watch("provider", (service, endpoints) -> seen.add(ids(endpoints)));

        await().atMost(WAIT).untilAsserted(() -> assertThat(seen).containsExactly(List.of("a")));
        assertThat(watchRequests).hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    void a_second_watch_of_a_service_shares_the_stream_and_gets_the_last_list_at_once() throws Exception {
        scripts.add(List.of(snapshot(1, "a")));
        WeftRegistry registry = client(startFakeControlPlane(), Duration.ofSeconds(7));
        List<List<String>> first = new CopyOnWriteArrayList<>();
        registry.watch("provider", (service, endpoints) -> first.add(ids(endpoints)));
        await().atMost(WAIT).until(() -> !first.isEmpty());

        List<List<String>> second = new CopyOnWriteArrayList<>();
        registry.watch("provider", (service, endpoints) -> second.add(ids(endpoints)));

        await().atMost(WAIT).untilAsserted(() -> assertThat(second).containsExactly(List.of("a")));
        assertThat(watchRequests).hasSize(1);
    }

    @Test
    void an_unreachable_control_plane_never_calls_the_listener_and_health_says_why() throws Exception {
        // Held for the whole test: the client dials again and again, and a port picked and closed could be taken.
        try (HeldPort closed = LoopbackPorts.held()) {
            int closedPort = closed.port();
            WeftRegistry registry = client(closedPort, Duration.ofSeconds(7));
            List<List<Endpoint>> seen = new CopyOnWriteArrayList<>();

            registry.watch("provider", (service, endpoints) -> seen.add(endpoints));
            Registration registration = registry.register(
                    new Endpoint("provider", "p1", "127.0.0.1", 7001, 1, 0, Map.of()), Duration.ofSeconds(3));

            await().atMost(WAIT).until(() -> registry.health().lastError() != null);
            await().during(Duration.ofMillis(500)).atMost(WAIT).until(seen::isEmpty);
            assertThat(registry.health().connected()).isFalse();
            assertThat(registry.health().lastError())
                    .contains("cannot connect to control plane at 127.0.0.1:" + closedPort);
            assertThat(registration.isRegistered()).isFalse();
        }
    }
}
