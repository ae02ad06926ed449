package dev.weft.cli;

import com.sun.net.httpserver.HttpServer;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kill -9} of a provider sidecar under load, with every piece a separate process: the consumer sees errors
 * only for requests that were in flight at the killed sidecar, and none once its lease has expired; and when it was
 * the only one, every later caller is refused at once.
 */
class KillProviderSidecarTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void killingAProviderSidecarFailsOnlyRequestsInFlightThere(@TempDir Path dir) throws Exception {
        HttpServer appA = app();
        HttpServer appB = app();
        HttpServer consumerApp = app();
        List<ChildJvm> children = new ArrayList<>();
        try (HeldPort inboundA = LoopbackPorts.held(); HeldPort inboundB = LoopbackPorts.held()) {
            String registry = control(dir, children);

            ChildJvm sidecarA = providerSidecar(dir, "a", appA, registry, "2s", inboundA);
            ChildJvm sidecarB = providerSidecar(dir, "b", appB, registry, "2s", inboundB);
            children.add(sidecarA);
            children.add(sidecarB);
            ChildJvm consumer = consumerSidecar(dir, consumerApp, registry);
            children.add(consumer);
            for (ChildJvm c : List.of(sidecarA, sidecarB)) {
                c.awaitLine("(started)", WAIT);
            }
            int upstream = upstreamPort(consumer);

            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .executor(Executors.newVirtualThreadPerTaskExecutor()).build();
            // Both providers must be in the consumer's view before the load starts.
            awaitServe(http, upstream, 2);

            ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
            // 4 s of load after the kill: the killed sidecar's 2 s lease expires halfway, calls run on both sides.
            long kill = loadAndKill(http, upstream, 24, Duration.ofSeconds(6), sidecarA, calls);
            List<Call> failed = calls.stream().filter(c -> c.status() != 200).toList();
            long okAfterKill = calls.stream().filter(c -> c.status() == 200 && c.startNanos() > kill).count();
            assertThat(okAfterKill).as("requests served after the kill").isPositive();
            // Only requests already in flight at the killed sidecar may fail: they started before the kill (plus the
            // few milliseconds until the consumer's sidecar sees the connection drop), and there are at most as
            // many as there were callers.
            assertThat(failed).as("failed calls: %s", failed).hasSizeLessThanOrEqualTo(24);
            for (Call c : failed) {
                assertThat(c.startNanos()).as("a failed call started %d ms after the kill: %s",
                        (c.startNanos() - kill) / 1_000_000, c).isLessThan(kill + Duration.ofMillis(300).toNanos());
            }
        } finally {
            for (int i = children.size() - 1; i >= 0; i--) {
                children.get(i).close();
            }
            appA.stop(0);
            appB.stop(0);
            consumerApp.stop(0);
        }
    }

    /** Far below the capacity queue's timeout (5 s), which is what callers used to wait for. */
    private static final Duration AT_ONCE = Duration.ofSeconds(3);

    /**
     * The only provider killed (issue 16, last row): its registration outlives it (a 30 s lease here), so the
     * consumer's sidecar knows one endpoint that refuses every dial. Callers must be told so at once, 503
     * {@code no-healthy-endpoint} (or {@code upstream-connect} for a request whose own dial found it), and never wait
     * in the capacity queue for its timeout (5 s).
     */
    @Test
    void whenTheOnlyProviderIsKilledCallersAreAnswered503AtOnce(@TempDir Path dir) throws Exception {
        HttpServer providerApp = app();
        HttpServer consumerApp = app();
        List<ChildJvm> children = new ArrayList<>();
        try (HeldPort inbound = LoopbackPorts.held()) {
            String registry = control(dir, children);
            ChildJvm provider = providerSidecar(dir, "only", providerApp, registry, "30s", inbound);
            children.add(provider);
            ChildJvm consumer = consumerSidecar(dir, consumerApp, registry);
            children.add(consumer);
            provider.awaitLine("(started)", WAIT);
            int upstream = upstreamPort(consumer);

            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .executor(Executors.newVirtualThreadPerTaskExecutor()).build();
            awaitServe(http, upstream, 1);

            ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
            // 2 s of load after the kill: far more than 16 calls when each is answered at once (one each if they queued).
            long killedAt = loadAndKill(http, upstream, 16, Duration.ofSeconds(4), provider, calls);

            // Requests in flight at the kill may fail any way (502, reset); the consumer's sidecar sees the connection
            // drop within a few milliseconds. Every request after that must be refused at once, and explicitly.
            List<Call> after = calls.stream().filter(c -> c.startNanos() > killedAt + Duration.ofMillis(300).toNanos()).toList();
            assertThat(after).as("requests made after the kill").hasSizeGreaterThan(16);
            for (Call c : after) {
                assertThat(c.status()).as("%s", c).isEqualTo(503);
                assertThat(c.kind()).as("%s", c).isIn("no-healthy-endpoint", "upstream-connect");
                assertThat(c.endNanos() - c.startNanos()).as("answered within %s: %s", AT_ONCE, c)
                        .isLessThan(AT_ONCE.toNanos());
            }
            assertThat(after).as("most callers are told no endpoint is healthy without a dial")
                    .filteredOn(c -> c.kind().equals("no-healthy-endpoint")).isNotEmpty();
        } finally {
            for (int i = children.size() - 1; i >= 0; i--) {
                children.get(i).close();
            }
            providerApp.stop(0);
            consumerApp.stop(0);
        }
    }

    /** Starts the control plane as a child (added to {@code children}); returns its registry URL. */
    private static String control(Path dir, List<ChildJvm> children) throws IOException, InterruptedException {
        ChildJvm control = ChildJvm.start("control", dir, "control", "--listen", "127.0.0.1:0", "--data-dir", dir.resolve("control").toString());
        children.add(control);
        return "weft://127.0.0.1:" + control.awaitLine("listening on [^:]+:(\\d+)", WAIT);
    }

    /**
     * The consumer's sidecar, with an upstream listener for service provider on a port the OS picks as it binds
     * ({@link #upstreamPort} reads it): a port picked here and closed could be taken before the child binds it.
     */
    private static ChildJvm consumerSidecar(Path dir, HttpServer app, String registry) throws IOException {
        return ChildJvm.start("sidecar-consumer", dir, "sidecar", "--service", "consumer",
                "--app", "127.0.0.1:" + app.getAddress().getPort(), "--upstream", "provider=127.0.0.1:0",
                "--registry", registry, "--workers", "1",
                "--token-file", ChildJvm.tokenFile(dir, registry, "consumer").toString(), "--mtls", "off");
    }

    /**
     * A provider's sidecar whose inbound listener binds {@code inbound} (Netty allows address reuse): held by the test,
     * the port of a killed sidecar refuses the consumer's dials for as long as the test runs, and nothing else (a bind
     * to port 0, one of those dials' own local port) can be given it.
     */
    private static ChildJvm providerSidecar(Path dir, String id, HttpServer app, String registry, String leaseTtl,
                                            HeldPort inbound) throws IOException {
        return ChildJvm.start("sidecar-provider-" + id, dir, "sidecar", "--service", "provider", "--id", "provider-" + id,
                "--app", "127.0.0.1:" + app.getAddress().getPort(), "--registry", registry,
                "--inbound", "127.0.0.1:" + inbound.port(),
                "--capacity", "50", "--lease-ttl", leaseTtl, "--workers", "1",
                "--token-file", ChildJvm.tokenFile(dir, registry, "provider").toString(), "--mtls", "off");
    }

    /** One call of the load: when it started and ended, its status (0: no answer), x-weft-error and body if not 200. */
    private record Call(long startNanos, long endNanos, int status, String kind, String error) {}

    /**
     * {@code callers} loops of POSTs through the consumer's sidecar for {@code length}; {@code victim} is killed with
     * SIGKILL 2 s in. Returns when every caller has stopped, with the moment of the kill (System.nanoTime).
     */
    private static long loadAndKill(HttpClient http, int port, int callers, Duration length, ChildJvm victim,
                                    ConcurrentLinkedQueue<Call> calls) throws InterruptedException {
        long end = System.nanoTime() + length.toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            workers.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < end) {
                    long s = System.nanoTime();
                    try {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                                HttpResponse.BodyHandlers.ofString());
                        calls.add(new Call(s, System.nanoTime(), r.statusCode(), r.headers().firstValue("x-weft-error").orElse(""),
                                r.statusCode() == 200 ? null : r.body()));
                    } catch (IOException | InterruptedException e) {
                        calls.add(new Call(s, System.nanoTime(), 0, "", e.toString()));
                    }
                }
            }));
        }
        Thread.sleep(2000);
        long killedAt = System.nanoTime();
        victim.kill9();
        for (Thread w : workers) {
            w.join(Duration.ofSeconds(30));
        }
        return killedAt;
    }

    /** Waits until {@code providers} distinct providers have answered through the consumer's sidecar. */
    private static void awaitServe(HttpClient http, int port, int providers) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        java.util.Set<String> seen = new java.util.HashSet<>();
        while (seen.size() < providers) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(providers + " providers never answered; saw " + seen);
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    seen.add(r.body());
                }
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
    }

    /** An app that answers its own port number after 20 ms, so the test can tell the two providers apart. */
    private static HttpServer app() throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        s.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        s.createContext("/", ex -> {
            ex.getRequestBody().readAllBytes();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] body = String.valueOf(s.getAddress().getPort()).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        s.start();
        return s;
    }

    /** The consumer sidecar's upstream port, from the line it prints once started. */
    private static int upstreamPort(ChildJvm consumer) throws IOException, InterruptedException {
        return Integer.parseInt(consumer.awaitLine("started:.* upstream provider=[^:]+:(\\d+)", WAIT));
    }
}
