package dev.weft.dataplane;

import dev.weft.dataplane.admin.AdminServer;
import dev.weft.dataplane.admin.AdminServer.Reply;
import dev.weft.dataplane.admin.ConfigPage;
import dev.weft.dataplane.admin.MetricsPage;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.inbound.InboundServer;
import dev.weft.dataplane.inbound.LocalApp;
import dev.weft.dataplane.mesh.MeshPool;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.CompositeObserver;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.Observability;
import dev.weft.dataplane.outbound.OutboundServer;
import dev.weft.dataplane.outbound.Router;
import dev.weft.dataplane.resilience.PolicyUpdates;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.dataplane.security.SidecarIdentity;
import dev.weft.dataplane.transport.Transport;
import dev.weft.dataplane.upstream.HttpUpstream;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.dataplane.upstream.WmpUpstream;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpLimits;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * One sidecar: assembles the data plane and runs its lifecycle (start, readiness, graceful drain).
 *
 * <p>A request's path through the pieces built here, app to app:
 * <pre>
 *   app ──HTTP/1.1──▶ OutboundServer → Http1Downstream → ProxyExchange (outbound PolicyStack) → WmpUpstream ──▶ WMP
 *   WMP ──▶ InboundServer/MeshSession → WmpDownstream → ProxyExchange (inbound PolicyStack) → HttpUpstream ──▶ app
 * </pre>
 * and the answer back the same way. The Collaborator carries each exchange on both sides.
 *
 * <p>What it assembles is elsewhere, one concern per class: the local app and the limit in front of it
 * ({@code inbound/LocalApp}), policy documents pushed through the registry ({@code resilience/PolicyUpdates}), and the
 * admin pages ({@code admin/ConfigPage}, {@code admin/MetricsPage}).
 *
 * <p>Threads: start and drain run on the caller's thread; the data plane on the Transport's Workers; readiness
 * checking and registration on a virtual thread; registry callbacks on the registry's thread.
 */
public final class Sidecar implements AutoCloseable {

    /** Endpoint metadata key holding the sidecar's admin address (HOST:PORT). */
    public static final String ADMIN_METADATA = "admin";

    private final SidecarConfig config;
    private final SidecarMetrics metrics = new SidecarMetrics();
    private final WmpCodecMetrics codecMetrics = new WmpCodecMetrics();
    private final long startedNanos = System.nanoTime();
    private Transport transport;
    private Registry registry;
    private Router router;
    private MeshPool meshPool;
    private Upstream meshUpstream;
    private LocalApp app;
    private HttpUpstream httpMeshUpstream;
    private InboundServer inbound;
    private OutboundServer outbound;
    private AdminServer admin;
    private final PolicyUpdates policies;
    private Watch policyWatch;
    private volatile Registration registration;
    private volatile boolean appAnswered;
    private volatile boolean registeredOnce;
    private volatile boolean draining;
    private final AtomicBoolean closed = new AtomicBoolean();
    private Thread readinessThread;
    /** The workload certificate and its renewals; null without a --token-file (or with --mtls off). */
    private SidecarIdentity identity;
    private final Map<String, InetSocketAddress> bound = new LinkedHashMap<>();

    private final ExchangeObserver extraObserver;
    private Observability observability;
    private ExchangeObserver observer;

    public Sidecar(SidecarConfig config) {
        this(config, ExchangeObserver.NOOP);
    }

    /**
     * @param observer sees every exchange besides the sidecar's own metrics, tracing and access logs (which
     *                 {@link SidecarConfig#observability()} configures); {@link ExchangeObserver#NOOP} for none
     */
    public Sidecar(SidecarConfig config, ExchangeObserver observer) {
        this.config = config;
        this.extraObserver = observer;
        this.policies = new PolicyUpdates(config.service(), this::applyPolicies);
    }

    /**
     * Binds every listener and starts registration in the background; returns the bound addresses.
     *
     * @throws dev.weft.dataplane.security.IdentityException with --mtls strict and no certificate (nothing is bound)
     */
    public Map<String, InetSocketAddress> start() throws InterruptedException {
        // First: in strict mode a sidecar without a certificate must not open a single port.
        identity = SidecarIdentity.start(config.service(), config.registryUrl(), config.tokenFile(), config.mtls());
        Collaborator collaborator = config.collaborator().create();
        // Before the transport: a bad access log path fails the start with nothing yet to clean up.
        observability = new Observability(config.observability(), config.service(), config.registryUrl(),
                this::requestsHandled);
        transport = new Transport(config.workers());
        observability.open(List.of(transport.manager(), transport.workers()));
        // With nothing observed the data plane gets NOOP, so the overhead baseline really is zero work.
        observer = CompositeObserver.of(observability.isActive() ? observability : ExchangeObserver.NOOP, extraObserver);
        registry = Registries.open(config.registryUrl());
        WmpLimits limits = WmpLimits.defaults();
        meshPool = new MeshPool(transport, limits, codecMetrics, config.meshConnectionsPerPeer(), 2000);
        router = new Router(registry, config.balancer(), config.queueSize(), config.queueTimeout(), 256);

        // The local app is a one-endpoint cluster: the same admission code (capacity + bounded queue) that protects
        // remote endpoints keeps the app under --capacity.
        app = new LocalApp(transport, config.service(), config.app(), config.capacity(), config.queueSize(),
                config.queueTimeout());
        inbound = new InboundServer(transport, app.cluster(), app.upstream(), collaborator, metrics, limits,
                codecMetrics, observer, config.service(), config.requestHeadTimeout());
        InetSocketAddress in = inbound.bind(config.inbound());
        bound.put("inbound", in);

        // The mesh link: WMP by default; HTTP/1.1 exists to measure WMP against (docs/benchmarks.md).
        meshUpstream = switch (config.meshProtocol()) {
            case WMP -> new WmpUpstream(meshPool);
            case HTTP1 -> httpMeshUpstream = new HttpUpstream(transport, "peer sidecar",
                    e -> router.policyFor(e.service()).maxConnections());
        };
        outbound = new OutboundServer(transport, router, meshUpstream, collaborator, metrics, observer,
                config.service(), config.requestHeadTimeout());
        for (Map.Entry<String, InetSocketAddress> u : new TreeMap<>(config.upstreams()).entrySet()) {
            bound.put("upstream " + u.getKey(), outbound.bind(u.getValue(), u.getKey()));
        }
        if (config.outbound() != null) {
            bound.put("outbound", outbound.bind(config.outbound(), null));
        }

        MetricsPage metricsPage = new MetricsPage(config.service(), metrics, codecMetrics, app, httpMeshUpstream,
                meshPool, outbound, inbound, router, registry, this::isRegistered, observability, this::isReady,
                startedNanos);
        // The identity's figures follow the page's own, so /metrics stays one scrape.
        Supplier<Reply> metricsRoute = identity == null ? metricsPage : () -> {
            Reply page = metricsPage.get();
            return new Reply(page.status(), page.contentType(), page.body() + identity.metrics());
        };
        admin = new AdminServer(transport, Map.of(
                "/live", () -> Reply.text(200, "live\n"),
                "/ready", this::readyReply,
                "/config", new ConfigPage(config, Collections.unmodifiableMap(bound), transport, router, app,
                        policies, registry, observability, this::isReady, () -> draining)
                        .section("identity", () -> identity != null ? identity.describe()
                                : SidecarIdentity.describeNone(config.mtls(), config.tokenFile())),
                "/metrics", metricsRoute));
        bound.put("admin", admin.bind(config.admin()));

        // Policies pushed through the registry replace the defaults without a restart.
        policyWatch = registry.watchPolicies(policies::onDocuments);

        InetSocketAddress advertised = config.advertise() != null ? config.advertise() : in;
        InetSocketAddress adminBound = bound.get("admin");
        // Registered so that ./weft stat and top can find every sidecar's /metrics through the registry.
        String adminAddress = (adminBound.getAddress() != null && adminBound.getAddress().isAnyLocalAddress()
                ? advertised.getHostString() : adminBound.getHostString()) + ":" + adminBound.getPort();
        readinessThread = Thread.ofVirtual().name("weft-readiness")
                .start(() -> awaitAppThenRegister(advertised, adminAddress));
        return Map.copyOf(bound);
    }

    /**
     * Registers only once the app accepts connections: peers must not be sent to an instance that cannot answer.
     */
    private void awaitAppThenRegister(InetSocketAddress advertised, String adminAddress) {
        long backoff = 50;
        while (!draining) {
            try (Socket s = new Socket()) {
                s.connect(config.app(), 1000);
                appAnswered = true;
                break;
            } catch (IOException e) {
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(1000, backoff * 2);
            }
        }
        if (draining) {
            return;
        }
        String id = config.instanceId() != null ? config.instanceId()
                : config.service() + "-" + advertised.getHostString() + "-" + advertised.getPort();
        registration = registry.register(new Endpoint(config.service(), id, advertised.getHostString(),
                advertised.getPort(), config.weight(), config.capacity(), Map.of(ADMIN_METADATA, adminAddress)),
                config.leaseTtl());
    }

    /**
     * Ready once the app answered and the registry accepted the registration. It stays ready through a registry
     * outage (the data plane is healthy and keeps serving known endpoints; registry connectivity is reported in
     * /metrics and /config instead), and stops being ready only when draining.
     */
    public boolean isReady() {
        if (draining || !appAnswered || (identity != null && !identity.ready())) {
            return false;
        }
        if (!registeredOnce) {
            registeredOnce = isRegistered();
        }
        return registeredOnce;
    }

    private boolean isRegistered() {
        Registration r = registration;
        return r != null && r.isRegistered();
    }

    private Reply readyReply() {
        if (isReady()) {
            return Reply.text(200, "ready\n");
        }
        String why = draining ? "draining" : !appAnswered ? "app at " + config.app().getHostString() + ":"
                + config.app().getPort() + " not answering yet"
                : identity != null && !identity.ready() ? identity.notReadyReason()
                : "registration with " + config.registryUrl() + " pending";
        return Reply.text(503, "not ready: " + why + "\n");
    }

    /**
     * Graceful drain (SIGTERM): deregister so peers stop choosing us, tell connected peers (GOAWAY) and stop
     * accepting, then wait for requests in flight up to the deadline, then close.
     */
    public void drain() {
        draining = true;
        Registration r = registration;
        if (r != null) {
            r.close();
        }
        inbound.drain("sidecar draining");
        outbound.stopAccepting();
        long deadline = System.nanoTime() + config.drainTimeout().toNanos();
        while (System.nanoTime() < deadline
                && (metrics.inbound.inFlight() > 0 || metrics.outbound.inFlight() > 0)) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        close();
    }

    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return; // drain() closes too; a second close (shutdown hook, test fixture) is a no-op
        }
        draining = true;
        if (readinessThread != null) {
            readinessThread.interrupt();
        }
        if (policyWatch != null) {
            policyWatch.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (outbound != null) {
            outbound.close();
        }
        if (inbound != null) {
            inbound.close();
        }
        if (meshPool != null) {
            meshPool.close();
        }
        if (router != null) {
            router.close();
        }
        if (registry != null) {
            registry.close();
        }
        if (transport != null) {
            transport.close();
        }
        if (identity != null) {
            identity.close();
        }
        if (observability != null) {
            // After the transport: every exchange has ended, so the last spans and log lines are queued.
            observability.close();
        }
    }

    /** Requests this sidecar finished, both directions: its hops, for the mesh tax. */
    private long requestsHandled() {
        long n = 0;
        for (int cls = 0; cls <= 5; cls++) {
            n += metrics.outbound.requests(cls) + metrics.inbound.requests(cls);
        }
        return n;
    }

    /**
     * Applies resilience policies by destination service ("*" = every service without its own); the local
     * service's entry also governs the inbound side (rate limits, timeout towards the app).
     */
    public void applyPolicies(Map<String, ServicePolicy> next) {
        router.applyPolicies(next);
        app.policy(router.policyFor(config.service()));
    }

    /** The policy in force for calls to {@code service}. */
    public ServicePolicy policyFor(String service) {
        return router.policyFor(service);
    }

    /** What happened to the last policy documents received (applied, or rejected and why). */
    public String policyStatus() {
        return policies.status();
    }

    public SidecarMetrics metrics() {
        return metrics;
    }

    public Map<String, InetSocketAddress> boundAddresses() {
        return Map.copyOf(bound);
    }

    /** The workload identity (certificate, renewals); null without a --token-file or with --mtls off. */
    public SidecarIdentity identity() {
        return identity;
    }
}
