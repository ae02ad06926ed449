package dev.weft.cli;

import dev.weft.control.ControlPlane;
import dev.weft.dataplane.Sidecar;
import dev.weft.dataplane.SidecarConfig;
import dev.weft.examples.ConsumerServer;
import dev.weft.examples.HostPort;
import dev.weft.examples.ProviderServer;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A three-tier mesh on loopback for the dashboard tests, every part real and started in this JVM on ports the OS
 * picks: the control plane (history every second), the example apps (gateway and consumer are {@code ConsumerServer}s,
 * two {@code ProviderServer}s) each beside its own sidecar, and a load of a few concurrent clients calling the gateway:
 * gateway → consumer → provider (two instances). Close it to stop everything it started.
 */
final class DashboardMesh implements AutoCloseable {
    final ControlPlane control = new ControlPlane().historyInterval(Duration.ofSeconds(1));
    final InetSocketAddress controlAddress;
    final List<Sidecar> sidecars = new ArrayList<>();
    private final List<AutoCloseable> started = new ArrayList<>();
    private final Path dataDir;
    /** The control plane's CA: each sidecar registers with a join token of its service (and gets its certificate). */
    private final dev.weft.control.ca.CertificateAuthority ca;
    private final AtomicBoolean loading = new AtomicBoolean(true);
    private final List<Thread> clients = new ArrayList<>();
    private final InetSocketAddress gateway;

    DashboardMesh() throws Exception {
        dataDir = Files.createTempDirectory("weft-dashboard-test");
        ca = dev.weft.control.ca.CertificateAuthority.open(dataDir.resolve("ca"),
                dev.weft.control.ca.CertificateAuthority.Settings.defaults());
        control.authority(ca);
        controlAddress = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir);
        for (int i = 1; i <= 2; i++) {
            ProviderServer p = ProviderServer.start(new ProviderServer.Settings(HostPort.parse("127.0.0.1:0"),
                    "provider-" + i, 64, Duration.ofMillis(i * 3L), 1));
            started.add(p);
            sidecar("provider", "provider-" + i, p.address(), Map.of());
        }
        // The two relays must be named to their sidecars before they listen (each is told its sidecar's upstream
        // port as it starts): their ports are held until the mesh closes, so that none of the sidecars' listeners
        // bound meanwhile (port 0) can be given one; the relays bind them all the same (Netty allows address reuse).
        HeldPort consumerPort = held();
        HeldPort gatewayPort = held();
        InetSocketAddress consumerApp = new InetSocketAddress("127.0.0.1", consumerPort.port());
        Sidecar consumer = sidecar("consumer", "consumer-1", consumerApp,
                Map.of("provider", new InetSocketAddress("127.0.0.1", 0)));
        started.add(ConsumerServer.start(ConsumerServer.Settings.of(HostPort.of(consumerApp),
                URI.create("http://127.0.0.1:" + consumer.boundAddresses().get("upstream provider").getPort()))));
        gateway = new InetSocketAddress("127.0.0.1", gatewayPort.port());
        Sidecar gw = sidecar("gateway", "gateway-1", gateway,
                Map.of("consumer", new InetSocketAddress("127.0.0.1", 0)));
        started.add(ConsumerServer.start(ConsumerServer.Settings.of(HostPort.of(gateway),
                URI.create("http://127.0.0.1:" + gw.boundAddresses().get("upstream consumer").getPort()))));
        for (Sidecar s : sidecars) {
            awaitReady(s);
        }
    }

    /** The operator's Authorization header (the control plane's generated admin.token): storing policies needs it. */
    String operatorAuthorization() {
        return "Bearer " + dev.weft.registry.auth.ControlCredentials.readToken(
                dataDir.resolve(dev.weft.control.ca.AdminToken.FILE));
    }

    String base() {
        return "http://127.0.0.1:" + controlAddress.getPort();
    }

    /** Starts {@code n} clients calling the gateway in a loop until {@link #close}. */
    void load(int n) {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        started.add(http);
        for (int i = 0; i < n; i++) {
            clients.add(Thread.ofVirtual().name("dashboard-load-" + i).start(() -> {
                HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.getPort() + "/"))
                        .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.ofString("hello")).build();
                while (loading.get()) {
                    try {
                        http.send(req, HttpResponse.BodyHandlers.discarding());
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    } catch (IOException e) {
                        // Counted by the mesh's metrics as a failure if it reached a sidecar; keep loading.
                    }
                }
            }));
        }
    }

    private Sidecar sidecar(String service, String id, InetSocketAddress app,
                            Map<String, InetSocketAddress> upstreams) throws Exception {
        SidecarConfig cfg = SidecarConfig.builder(service, app).instanceId(id)
                .inbound(new InetSocketAddress("127.0.0.1", 0)).upstreams(upstreams)
                .admin(new InetSocketAddress("127.0.0.1", 0)).registry("weft://127.0.0.1:" + controlAddress.getPort())
                .leaseTtl(Duration.ofSeconds(2)).workers(1).tokenFile(Files.writeString(
                        Files.createTempFile(dataDir, service, ".token"),
                        ca.createToken(service, Duration.ofMinutes(30), false).join().token())).build();
        Sidecar s = new Sidecar(cfg);
        started.add(s);
        sidecars.add(s);
        s.start();
        return s;
    }

    /** A held port, let go when the mesh closes (after what listens on it). */
    private HeldPort held() throws IOException {
        HeldPort p = LoopbackPorts.held();
        started.addFirst(p);
        return p;
    }

    private static void awaitReady(Sidecar s) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!s.isReady()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("sidecar not ready within 20 s: " + s.boundAddresses());
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() throws Exception {
        loading.set(false);
        for (Thread t : clients) {
            t.interrupt();
            t.join(5000);
        }
        for (int i = started.size() - 1; i >= 0; i--) {
            started.get(i).close();
        }
        control.close();
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
