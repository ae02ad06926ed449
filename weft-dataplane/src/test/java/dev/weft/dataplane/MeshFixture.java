package dev.weft.dataplane;

import dev.weft.control.ControlPlane;
import dev.weft.control.ca.CertificateAuthority;
import dev.weft.dataplane.http.Http1RequestDecoder;
import dev.weft.dataplane.inbound.AppHealth;
import dev.weft.dataplane.observe.ObservabilityConfig;
import dev.weft.registry.support.Durations;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A small mesh on loopback for tests: the embedded control plane, and sidecars started in this JVM with real
 * sockets on ports the OS picks. Close it to stop everything it started.
 */
final class MeshFixture implements AutoCloseable {
    final ControlPlane control = new ControlPlane();
    final InetSocketAddress controlAddress;
    final String collaborator;
    final String meshProtocol;
    /**
     * {@code --mtls} of every sidecar. The control plane is always a CA and every sidecar gets a join token: it
     * registers with it (the control plane wants credentials for that), and takes a certificate with it unless "off".
     *
     * <p>"off" unless a test says otherwise, though the sidecar's own default is strict: the tests that use this
     * fixture are about routing, limits, timeouts and the WMP boundary (several send plaintext WMP to an inbound port
     * on purpose), not the link's TLS, which MeshTlsTest, MutualTlsMeshLinkTest and SidecarIdentityTest cover on
     * strict sidecars. Measured on 2026-12-02 (2 cores shared with other helpers' builds, load average 12 to 27), five
     * classes on this fixture (ResilienceTest, PolicyPushTest, ReuseAcrossRequestsTest, AppHealthTest,
     * ObservabilityTest), two runs each way: 41.6 and 47.2 s with "off", 68.2 and 48.3 s with "strict" (a certificate
     * per sidecar start, a handshake per pooled connection): up to 60% more per class, on a suite near its budget.
     */
    final String mtls;
    private final CertificateAuthority ca;
    private final List<AutoCloseable> started = new ArrayList<>();
    private final Path dataDir;
    /** What the sidecars observe: the production defaults unless a test sets something else before starting them. */
    ObservabilityConfig observability = ObservabilityConfig.defaults();
    /** The HTTP/1.1 listeners' request-head timeout: the production default unless a test sets one before starting. */
    Duration requestHeadTimeout = Http1RequestDecoder.DEFAULT_HEAD_TIMEOUT;
    /** How sidecars check their app: the production default unless a test sets one before starting them. */
    AppHealth.Config appHealth = AppHealth.Config.defaults();
    /** The idle timeout of the HTTP/1.1 listeners, and the body timeout: the production defaults unless set. */
    Duration idleTimeout = Durations.parse(SidecarConfig.Defaults.IDLE_TIMEOUT);
    Duration bodyTimeout = Durations.parse(SidecarConfig.Defaults.BODY_TIMEOUT);

    MeshFixture(String collaborator) throws Exception {
        this(collaborator, "wmp");
    }

    MeshFixture(String collaborator, String meshProtocol) throws Exception {
        this(collaborator, meshProtocol, "off");
    }

    /**
     * @param mtls "strict": every sidecar gets a certificate (mTLS on the link); "off": a plaintext link, each
     *             sidecar's join token proving only its registration (what a permissive sidecar without a token was
     *             before registrations needed credentials: the same plaintext link, both ways)
     */
    MeshFixture(String collaborator, String meshProtocol, String mtls) throws Exception {
        this.collaborator = collaborator;
        this.meshProtocol = meshProtocol;
        this.mtls = mtls;
        dataDir = Files.createTempDirectory("weft-control-test");
        ca = CertificateAuthority.open(dataDir.resolve("ca"), CertificateAuthority.Settings.defaults());
        control.authority(ca);
        controlAddress = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir);
    }

    String registryUrl() {
        return "weft://127.0.0.1:" + controlAddress.getPort();
    }

    /** The operator's credentials (the control plane's generated admin.token): what a test registers or applies with. */
    dev.weft.registry.auth.ControlCredentials operator() {
        return dev.weft.registry.auth.ControlCredentials.bearerFile(adminTokenFile());
    }

    /** The control plane's admin.token, for {@code ./weft apply --admin-token-file}. */
    Path adminTokenFile() {
        return dataDir.resolve(dev.weft.control.ca.AdminToken.FILE);
    }

    /** A provider-side sidecar for {@code app}; waits until it is ready. */
    Sidecar provider(String service, String id, InetSocketAddress app, int weight, int capacity) throws Exception {
        return sidecar(service, id, app, Map.of(), false, weight, capacity);
    }

    /**
     * A consumer-side sidecar with one upstream listener per name in {@code upstreams} and a shared Host-routed
     * outbound listener when {@code sharedOutbound}.
     */
    Sidecar consumer(InetSocketAddress app, List<String> upstreams, boolean sharedOutbound) throws Exception {
        Map<String, InetSocketAddress> ups = new java.util.LinkedHashMap<>();
        for (String u : upstreams) {
            ups.put(u, new InetSocketAddress("127.0.0.1", 0));
        }
        return sidecar("consumer", "consumer-1", app, ups, sharedOutbound, 1, 0);
    }

    /** A consumer-side sidecar for {@code app} with one upstream listener, to {@code service}. */
    Sidecar consumerOf(String service, TestApp app) throws Exception {
        return consumer(app.address(), List.of(service), false);
    }

    Sidecar sidecar(String service, String id, InetSocketAddress app, Map<String, InetSocketAddress> upstreams,
                    boolean sharedOutbound, int weight, int capacity) throws Exception {
        SidecarConfig cfg = SidecarConfig.builder(service, app).instanceId(id)
                .inbound(new InetSocketAddress("127.0.0.1", 0))
                .outbound(sharedOutbound ? new InetSocketAddress("127.0.0.1", 0) : null).upstreams(upstreams)
                .admin(new InetSocketAddress("127.0.0.1", 0)).registry(registryUrl()).weight(weight).capacity(capacity)
                .queueSize(2048).queueTimeout(Duration.ofSeconds(10)).leaseTtl(Duration.ofSeconds(2))
                .balancer("weighted-round-robin").collaborator(collaborator).workers(2).meshProtocol(meshProtocol)
                .meshConnectionsPerPeer(2).drainTimeout(Duration.ofSeconds(5)).observability(observability)
                .requestHeadTimeout(requestHeadTimeout).idleTimeout(idleTimeout).bodyTimeout(bodyTimeout)
                .appHealth(appHealth).mtls(mtls).tokenFile(Files.writeString(
                        Files.createTempFile(dataDir, "token", ".txt"),
                        ca.createToken(service, Duration.ofMinutes(10), false).join().token())).build();
        Sidecar s = new Sidecar(cfg);
        started.add(s);
        s.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!s.isReady()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("sidecar " + id + " not ready within 10 s");
            }
            Thread.sleep(10);
        }
        return s;
    }

    static int port(Sidecar s, String listener) {
        InetSocketAddress a = s.boundAddresses().get(listener);
        if (a == null) {
            throw new AssertionError("no listener '" + listener + "' (have " + s.boundAddresses().keySet() + ")");
        }
        return a.getPort();
    }

    @Override
    public void close() throws Exception {
        for (int i = started.size() - 1; i >= 0; i--) {
            started.get(i).close();
        }
        control.close();
    }
}
