package dev.weft.dataplane;

import dev.weft.dataplane.admin.AdminServer;
import dev.weft.dataplane.admin.BuildInfo;
import dev.weft.dataplane.admin.AdminServer.Reply;
import dev.weft.dataplane.admin.ConfigPage;
import dev.weft.dataplane.admin.MetricsPage;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.inbound.AppHealth;
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
import dev.weft.dataplane.security.MeshTls;
import dev.weft.dataplane.security.SidecarIdentity;
import dev.weft.dataplane.transport.Transport;
import dev.weft.dataplane.upstream.HttpUpstream;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.dataplane.upstream.WmpUpstream;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpLimits;
import dev.weft.dataplane.security.WorkloadCertificate;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;
import dev.weft.registry.auth.ControlCredentials;
import dev.weft.registry.auth.RequestSignature;
import dev.weft.registry.support.StartupTrace;

import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One sidecar: assembles the data plane and runs its lifecycle (start, readiness, graceful drain).
 *
 * <p>A request's path through the pieces built here, app to app:
 * <pre>
 *   app ──HTTP/1.1──▶ OutboundServer → Http1Downstream → ProxyExchange (outbound PolicyStack) → WmpUpstream ──▶ WMP
 *   WMP ──▶ InboundServer/MeshSession → WmpDownstream → ProxyExchange (inbound PolicyStack) → HttpUpstream ──▶ app
 * </pre>
 * and the answer back the same way. The Collaborator carries each exchange on both sides. Between the two sidecars
 * WMP runs inside mTLS while they hold certificates ({@code security/MeshTls}, built from the identity here).
 *
 * <p>What it assembles is elsewhere, one concern per class: the local app and the limit in front of it
 * ({@code inbound/LocalApp}), policy documents pushed through the registry ({@code resilience/PolicyUpdates}), and the
 * admin pages ({@code admin/ConfigPage}, {@code admin/MetricsPage}).
 *
 * <p>Threads: start and drain run on the caller's thread; the data plane on the Transport's Workers; readiness
 * checking and registration on a virtual thread; registry callbacks on the registry's thread.
 */
public final class Sidecar implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Sidecar.class.getName());

    /** Endpoint metadata key holding the sidecar's admin address (HOST:PORT). */
    public static final String ADMIN_METADATA = "admin";
    /** Endpoint metadata key of the sidecar's build version, shown on the dashboard's sidecars page. */
    public static final String VERSION_METADATA = "version";

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
    private final AppHealth appHealth;
    private volatile boolean registeredOnce;
    private volatile boolean draining;
    private final AtomicBoolean closed = new AtomicBoolean();
    private Thread readinessThread;
    /** The workload certificate and its renewals; null without a --token-file (or with --mtls off). */
    private SidecarIdentity identity;
    /** TLS on the mesh link, from the identity: both listeners' and the pool's one source of TLS handlers. */
    private MeshTls meshTls;
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
        this.appHealth = new AppHealth(config.app(), config.appHealth());
    }

    /**
     * Binds every listener and starts registration in the background; returns the bound addresses.
     *
     * @throws dev.weft.dataplane.security.IdentityException with --mtls strict and no certificate (nothing is bound)
     */
    public Map<String, InetSocketAddress> start() throws InterruptedException {
        // First: in strict mode a sidecar without a certificate must not open a single port.
        StartupTrace.mark("Sidecar.start");
        identity = SidecarIdentity.start(config.service(), config.registryUrl(), config.tokenFile(), config.mtls());
        Collaborator collaborator = config.collaborator().create();
        // Before the transport: a bad access log path fails the start with nothing yet to clean up.
        ControlCredentials credentials = controlCredentials();
        // Spans: the token (read once, kept in memory) costs nothing per batch; signatures once it has expired.
        String token = config.tokenFile() == null ? null : ControlCredentials.readToken(config.tokenFile());
        observability = new Observability(config.observability(), config.service(), config.registryUrl(),
                this::requestsHandled, new Observability.SpanCredentials(
                        token == null ? null : ControlCredentials.bearer(token), credentials));
        StartupTrace.mark("identity and observability built");
        transport = new Transport(config.workers());
        StartupTrace.mark("transport (Netty event loops) up");
        observability.open(List.of(transport.manager(), transport.workers()));
        // With nothing observed the data plane gets NOOP, so the overhead baseline really is zero work.
        observer = CompositeObserver.of(observability.isActive() ? observability : ExchangeObserver.NOOP, extraObserver);
        registry = Registries.open(config.registryUrl(), credentials);
        StartupTrace.mark("registry client open");
        WmpLimits limits = WmpLimits.defaults();
        meshTls = new MeshTls(config.mtls(), identity);
        meshPool = new MeshPool(transport, limits, codecMetrics, config.meshConnectionsPerPeer(), 2000,
                metrics.rejected, meshTls);
        router = new Router(registry, config.balancer(), config.queueSize(), config.queueTimeout(), 256);
        long idle = Router.IDLE_AFTER.toMillis();
        transport.manager().next().scheduleAtFixedRate(router::expireIdle, idle, idle, TimeUnit.MILLISECONDS);

        // The local app is a one-endpoint cluster: the same admission code (capacity + bounded queue) that protects
        // remote endpoints keeps the app under --capacity.
        app = new LocalApp(transport, config.service(), config.app(), config.capacity(), config.queueSize(),
                config.queueTimeout(), config.timeouts().body());
        inbound = new InboundServer(transport, app.cluster(), app.upstream(), collaborator, metrics, limits,
                codecMetrics, observer, config.service(), config.timeouts(), meshTls);
        InetSocketAddress in = inbound.bind(config.inbound());
        bound.put("inbound", in);
        StartupTrace.mark("inbound bound");

        // The mesh link: WMP by default; HTTP/1.1 exists to measure WMP against (docs/benchmarks.md).
        meshUpstream = switch (config.meshProtocol()) {
            case WMP -> new WmpUpstream(meshPool);
            case HTTP1 -> httpMeshUpstream = new HttpUpstream(transport, "peer sidecar",
                    e -> router.policyFor(e.service()).maxConnections(), config.timeouts().body());
        };
        outbound = new OutboundServer(transport, router, meshUpstream, collaborator, metrics, observer,
                config.service(), config.timeouts());
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
        Supplier<Reply> metricsRoute = () -> {
            Reply page = metricsPage.get();
            return new Reply(page.status(), page.contentType(), page.body() + meshTls.metrics()
                    + (identity == null ? "" : identity.metrics()));
        };
        admin = new AdminServer(transport, Map.of(
                "/live", () -> Reply.text(200, "live\n"),
                "/ready", this::readyReply,
                "/config", new ConfigPage(config, Collections.unmodifiableMap(bound), transport, router, app,
                        policies, registry, observability, this::isReady, () -> draining)
                        .section("identity", () -> identity != null ? identity.describe()
                                : SidecarIdentity.describeNone(config.mtls(), config.tokenFile())),
                "/metrics", metricsRoute,
                "/observability", () -> Reply.text(200, observabilityState())),
                Map.of("/observability", this::switchObservability));
        bound.put("admin", admin.bind(config.admin()));
        StartupTrace.mark("outbound and admin bound");

        // Policies pushed through the registry replace the defaults without a restart.
        policyWatch = registry.watchPolicies(policies::onDocuments);

        InetSocketAddress advertised = config.advertise() != null ? config.advertise() : in;
        InetSocketAddress adminBound = bound.get("admin");
        // Registered so that ./weft stat and top can find every sidecar's /metrics through the registry.
        String adminAddress = (adminBound.getAddress() != null && adminBound.getAddress().isAnyLocalAddress()
                ? advertised.getHostString() : adminBound.getHostString()) + ":" + adminBound.getPort();
        readinessThread = Thread.ofVirtual().name("weft-readiness")
                .start(() -> followAppHealth(advertised, adminAddress));
        return Map.copyOf(bound);
    }

    private String observabilityState() {
        return !observability.isActive() ? "off (--metrics off --tracing off, no access log)\n"
                : observability.paused() ? "paused\n" : "on\n";
    }

    /** {@code POST /observability?state=on|off}: resumes or pauses metrics, traces and access logs (admin's loop). */
    private Reply switchObservability(io.netty.handler.codec.http.QueryStringDecoder uri) {
        List<String> state = uri.parameters().getOrDefault("state", List.of());
        if (state.size() != 1 || !(state.getFirst().equals("on") || state.getFirst().equals("off"))) {
            return Reply.text(400, "expected POST /observability?state=on or ?state=off\n");
        }
        if (!observability.isActive()) {
            return Reply.text(409, "observability is off by flags (--metrics off --tracing off): nothing to switch\n");
        }
        boolean pause = state.getFirst().equals("off");
        if (observability.pause(pause)) {
            LOG.log(pause ? System.Logger.Level.WARNING : System.Logger.Level.INFO, pause
                    ? "observability paused from the admin port: no metrics, traces or access logs until resumed"
                    : "observability resumed from the admin port");
        }
        return Reply.text(200, observabilityState());
    }

    /**
     * Registers only once the app answers its health check, then keeps checking it: when the app stops answering
     * the endpoint is deregistered (callers' watches drop it within a second) and /ready turns 503; when it answers
     * again it is registered again. Peers must not be sent to an instance that cannot answer.
     */
    private void followAppHealth(InetSocketAddress advertised, String adminAddress) {
        long backoff = 50;
        long interval = config.appHealth().interval().toMillis();
        while (!draining) {
            if (appHealth.check() && !draining) {
                if (appHealth.isHealthy()) {
                    StartupTrace.mark("app healthy, registering");
                    register(advertised, adminAddress);
                } else {
                    deregister();
                }
            }
            try {
                // Fast until the app first answers (start-up time is paid by every instance), then every interval.
                Thread.sleep(appHealth.checksPassed() == 0 ? backoff : interval);
            } catch (InterruptedException ie) {
                return;
            }
            backoff = Math.min(interval, backoff * 2);
        }
    }

    private void register(InetSocketAddress advertised, String adminAddress) {
        String id = config.instanceId() != null ? config.instanceId()
                : config.service() + "-" + advertised.getHostString() + "-" + advertised.getPort();
        registration = registry.register(new Endpoint(config.service(), id, advertised.getHostString(),
                advertised.getPort(), config.weight(), config.capacity(), Map.of(ADMIN_METADATA, adminAddress,
                        VERSION_METADATA, BuildInfo.version())),
                config.leaseTtl());
    }

    /** Stops the health checks, so that none re-registers the endpoint once draining has deregistered it. */
    private void stopFollowingAppHealth() {
        Thread t = readinessThread;
        if (t != null) {
            t.interrupt();
            try {
                t.join(2_000); // a check in progress ends within its timeout
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void deregister() {
        Registration r = registration;
        registration = null;
        if (r != null) {
            r.close();
        }
    }

    /**
     * Ready while the app passes its health check and once the registry has accepted the registration. It stays
     * ready through a registry outage (the data plane is healthy and keeps serving known endpoints; registry
     * connectivity is reported in /metrics and /config instead); it stops being ready when the app fails its
     * health check and when draining.
     */
    public boolean isReady() {
        return notReadyReason() == null;
    }

    /** Why this sidecar is not ready, or null when it is: the one place readiness is decided. */
    private String notReadyReason() {
        if (draining) {
            return "draining";
        }
        if (!appHealth.isHealthy()) {
            return "app at " + config.app().getHostString() + ":" + config.app().getPort() + " not healthy ("
                    + appHealth.config().describe() + "; last: " + appHealth.lastFailure() + ")";
        }
        if (identity != null && !identity.ready()) {
            return identity.notReadyReason();
        }
        if (!registeredOnce) {
            registeredOnce = isRegistered();
            if (registeredOnce) {
                StartupTrace.markWithThreads("registration accepted: /ready answers 200");
            }
        }
        if (registeredOnce) {
            return null;
        }
        // The registry's last refusal says why, e.g. a 401 for a sidecar started without --token-file.
        String last = registry == null ? null : registry.health().lastError();
        return "registration with " + config.registryUrl() + " pending" + (last == null ? "" : " (last: " + last + ")");
    }

    private boolean isRegistered() {
        Registration r = registration;
        return r != null && r.isRegistered();
    }

    private Reply readyReply() {
        String why = notReadyReason();
        return why == null ? Reply.text(200, "ready\n") : Reply.text(503, "not ready: " + why + "\n");
    }

    /**
     * Graceful drain (SIGTERM): deregister so peers stop choosing us, tell connected peers (GOAWAY) and stop
     * accepting, then wait for requests in flight up to the deadline, then close.
     */
    public void drain() {
        stopInbound();
        outbound.stopAccepting();
        long deadline = System.nanoTime() + config.drainTimeout().toNanos();
        awaitNone(() -> metrics.inbound.inFlight() + metrics.outbound.inFlight(), deadline);
        close();
    }

    /**
     * Drain for a sidecar that runs its app as a child ({@code weft sidecar ... -- APP}), in the order that loses
     * nothing: deregister and stop accepting inbound, wait for inbound requests in flight, then {@code stopApp}
     * (the app may still call out while it shuts down, so the outbound side stays open until it has exited), then
     * stop accepting outbound, wait for outbound in flight, and close. Each wait is bounded by the drain timeout.
     */
    public void drain(Runnable stopApp) {
        stopInbound();
        awaitNone(metrics.inbound::inFlight, System.nanoTime() + config.drainTimeout().toNanos());
        stopApp.run();
        outbound.stopAccepting();
        awaitNone(metrics.outbound::inFlight, System.nanoTime() + config.drainTimeout().toNanos());
        close();
    }

    /** The first steps of either drain: no health check re-registers us, peers stop choosing us, inbound closes. */
    private void stopInbound() {
        draining = true;
        stopFollowingAppHealth();
        deregister();
        inbound.drain("sidecar draining");
    }

    private static void awaitNone(LongSupplier inFlight, long deadline) {
        while (System.nanoTime() < deadline && inFlight.getAsLong() > 0) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
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

    /**
     * What the registration, watches, policy reads and posted spans prove the sidecar with (docs/security.md): a
     * signature by its mesh key while it holds a certificate valid now, else its join token (read from --token-file at
     * each request, never used up), else nothing (then the control plane refuses the registration, 401).
     */
    private ControlCredentials controlCredentials() {
        ControlCredentials token = config.tokenFile() == null ? ControlCredentials.NONE
                : ControlCredentials.bearerFile(config.tokenFile());
        SidecarIdentity id = identity;
        if (id == null) {
            return token;
        }
        return RequestSignature.credentials(() -> {
            WorkloadCertificate c = id.current();
            return c != null && c.isValidAt(java.time.Instant.now())
                    ? new RequestSignature.Signer(c.key(), c.certificate()) : null;
        }, token);
    }

    /** The workload identity (certificate, renewals); null without a --token-file or with --mtls off. */
    public SidecarIdentity identity() {
        return identity;
    }
}
