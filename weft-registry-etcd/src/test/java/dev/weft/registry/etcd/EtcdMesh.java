package dev.weft.registry.etcd;

import com.sun.net.httpserver.HttpServer;
import dev.weft.dataplane.Sidecar;
import dev.weft.dataplane.SidecarConfig;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small mesh in this JVM whose sidecars use etcd: provider apps (the JDK's HTTP server) each behind a provider
 * sidecar, and a consumer sidecar with an upstream listener for "provider". Real sockets on ports the OS picks, as in
 * the data plane's own MeshFixture; {@link Load} drives requests through the consumer sidecar.
 */
final class EtcdMesh implements AutoCloseable {
    static final Duration LEASE_TTL = Duration.ofSeconds(3);
    final List<Sidecar> providers = new ArrayList<>();
    /** Requests each provider app answered, by instance id. */
    final Map<String, AtomicLong> servedBy = new ConcurrentHashMap<>();
    Sidecar consumer;
    private final List<Runnable> stopAtClose = new ArrayList<>();
    private final String providerRegistryUrl;
    private final String consumerRegistryUrl;

    /** Join tokens for the sidecars on a weft:// control plane (their registrations need credentials), by service. */
    private java.util.function.Function<String, java.nio.file.Path> tokenFiles = service -> null;

    EtcdMesh(String registryUrl) {
        this(registryUrl, registryUrl);
    }

    /** Providers and consumer on different registry URLs, e.g. a control plane on etcd and etcd itself. */
    EtcdMesh(String providerRegistryUrl, String consumerRegistryUrl) {
        this.providerRegistryUrl = providerRegistryUrl;
        this.consumerRegistryUrl = consumerRegistryUrl;
    }

    /** Where the sidecars registering through a control plane find their join token; before {@link #start}. */
    EtcdMesh tokenFiles(java.util.function.Function<String, java.nio.file.Path> byService) {
        this.tokenFiles = byService;
        return this;
    }

    /** Starts {@code count} providers and the consumer; waits until every sidecar is ready and sees every provider. */
    EtcdMesh start(int count) throws Exception {
        for (int i = 1; i <= count; i++) {
            String id = "provider-" + i;
            providers.add(sidecar("provider", id, app(id), Map.of()));
        }
        consumer = sidecar("consumer", "consumer-1", app("consumer"),
                Map.of("provider", new InetSocketAddress("127.0.0.1", 0)));
        return this;
    }

    int upstreamPort() {
        return consumer.boundAddresses().get("upstream provider").getPort();
    }

    private InetSocketAddress app(String id) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        AtomicLong served = id.startsWith("provider") ? servedBy.computeIfAbsent(id, k -> new AtomicLong())
                : new AtomicLong();
        server.createContext("/", ex -> {
            ex.getRequestBody().readAllBytes();
            byte[] body = id.getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
            served.incrementAndGet();
        });
        server.start();
        stopAtClose.add(() -> server.stop(0));
        return server.getAddress();
    }

    private Sidecar sidecar(String service, String id, InetSocketAddress app, Map<String, InetSocketAddress> upstreams)
            throws Exception {
        String registry = service.equals("consumer") ? consumerRegistryUrl : providerRegistryUrl;
        SidecarConfig config = SidecarConfig.builder(service, app).instanceId(id)
                .inbound(new InetSocketAddress("127.0.0.1", 0)).upstreams(upstreams)
                .admin(new InetSocketAddress("127.0.0.1", 0))
                .registry(registry).weight(1).capacity(0)
                .tokenFile(registry.startsWith("weft://") ? tokenFiles.apply(service) : null)
                // As before strict became the default: an etcd registry has no CA, so no certificate, plaintext link.
                .mtls("permissive")
                .queueSize(2048).queueTimeout(Duration.ofSeconds(10)).leaseTtl(LEASE_TTL)
                .balancer("weighted-round-robin").collaborator("event-loop").workers(1).meshProtocol("wmp")
                .meshConnectionsPerPeer(1).drainTimeout(Duration.ofSeconds(2)).build();
        Sidecar sidecar = new Sidecar(config);
        stopAtClose.add(sidecar::close);
        sidecar.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!sidecar.isReady()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("sidecar " + id + " not ready within 15 s");
            }
            Thread.sleep(20);
        }
        return sidecar;
    }

    @Override
    public void close() {
        for (int i = stopAtClose.size() - 1; i >= 0; i--) {
            stopAtClose.get(i).run();
        }
    }

    /**
     * Clients sending requests through the consumer sidecar back to back until stopped, each with a 5 s timeout.
     * Counts answers and keeps the first failures (status and body, or the exception) for the assertion message.
     */
    static final class Load implements AutoCloseable {
        final AtomicLong ok = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> threads = new ArrayList<>();
        private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();

        Load(int port, int clients, Duration maxDuration) {
            URI uri = URI.create("http://127.0.0.1:" + port + "/work");
            long deadline = System.nanoTime() + maxDuration.toNanos();
            for (int i = 0; i < clients; i++) {
                threads.add(Thread.ofVirtual().name("load-" + i).start(() -> {
                    while (running.get() && System.nanoTime() < deadline) {
                        send(uri);
                    }
                }));
            }
        }

        private void send(URI uri) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5))
                        .POST(HttpRequest.BodyPublishers.ofString("hello")).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    ok.incrementAndGet();
                } else {
                    fail(r.statusCode() + " " + r.headers().firstValue("x-weft-error").orElse("") + " " + r.body());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                running.set(false);
            } catch (Exception e) {
                fail(e.toString());
            }
        }

        private void fail(String what) {
            if (failed.incrementAndGet() <= 10) {
                failures.add(what);
            }
        }

        @Override
        public void close() {
            stop();
        }

        /** Stops the clients and waits (up to 10 s each) for the requests in flight. */
        void stop() {
            running.set(false);
            try {
                for (Thread t : threads) {
                    t.join(Duration.ofSeconds(10));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            http.close();
        }
    }
}
