package dev.weft.dataplane;

import dev.weft.dataplane.admin.AdminServer;
import dev.weft.dataplane.admin.AdminServer.Reply;
import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.inbound.InboundServer;
import dev.weft.dataplane.mesh.MeshPool;
import dev.weft.dataplane.metrics.PrometheusText;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.observe.CompositeObserver;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.Observability;
import dev.weft.dataplane.outbound.OutboundServer;
import dev.weft.dataplane.outbound.Router;
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
import dev.weft.registry.RegistryHealth;
import dev.weft.registry.support.JsonValues;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

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
    private Cluster appCluster;
    private HttpUpstream appUpstream;
    private HttpUpstream httpMeshUpstream;
    /** The inbound concurrency limit last applied, so a policy push that keeps it does not reset what was learned. */
    private dev.weft.dataplane.resilience.ServicePolicy.ConcurrencyLimit inboundLimit;
    private InboundServer inbound;
    private OutboundServer outbound;
    private AdminServer admin;
    private volatile Registration registration;
    private volatile boolean appAnswered;
    private volatile boolean draining;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    private Thread readinessThread;
    private dev.weft.registry.Watch policyWatch;
    private volatile String policyStatus = "defaults (no policy document applied)";
    private volatile Map<String, String> policyDocuments = Map.of();
    private final java.util.concurrent.atomic.LongAdder policyRejections = new java.util.concurrent.atomic.LongAdder();
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
    }

    /** Binds every listener and starts registration in the background; returns the bound addresses. */
    public Map<String, InetSocketAddress> start() throws InterruptedException {
        Collaborator collaborator = Collaborator.named(config.collaborator());
        Balancer.Factory balancer = Balancer.named(config.balancer());
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
        router = new Router(registry, balancer, config.queueSize(), config.queueTimeout(), 256);

        // The local app is a one-endpoint cluster: the same admission code (capacity + bounded queue) that protects
        // remote endpoints keeps the app under --capacity.
        appCluster = new Cluster("app:" + config.service(), Balancer.named("round-robin"), config.queueSize(),
                config.queueTimeout());
        appCluster.update(List.of(new Endpoint(config.service(), "local-app", config.app().getHostString(),
                config.app().getPort(), 1, config.capacity(), Map.of())));
        applyInboundLimit(appCluster.policy().concurrencyLimit());
        appUpstream = new HttpUpstream(transport, "app", e -> appCluster.policy().maxConnections());

        inbound = new InboundServer(transport, appCluster, appUpstream, collaborator, metrics, limits, codecMetrics,
                observer, config.service(), config.requestHeadTimeout());
        InetSocketAddress in = inbound.bind(config.inbound());
        bound.put("inbound", in);

        // The mesh link: WMP by default; HTTP/1.1 exists to measure WMP against (docs/benchmarks.md).
        meshUpstream = switch (config.meshProtocol()) {
            case "wmp" -> new WmpUpstream(meshPool);
            case "http1" -> httpMeshUpstream = new HttpUpstream(transport, "peer sidecar",
                    e -> router.policyFor(e.service()).maxConnections());
            default -> throw new IllegalArgumentException("unknown mesh protocol '" + config.meshProtocol()
                    + "' (expected: wmp, http1)");
        };
        outbound = new OutboundServer(transport, router, meshUpstream, collaborator, metrics, observer,
                config.service(), config.requestHeadTimeout());
        for (Map.Entry<String, InetSocketAddress> u : new TreeMap<>(config.upstreams()).entrySet()) {
            bound.put("upstream " + u.getKey(), outbound.bind(u.getValue(), u.getKey()));
        }
        if (config.outbound() != null) {
            bound.put("outbound", outbound.bind(config.outbound(), null));
        }

        admin = new AdminServer(transport, Map.of(
                "/live", () -> Reply.text(200, "live\n"),
                "/ready", this::readyReply,
                "/config", () -> new Reply(200, "application/json", configJson()),
                "/metrics", () -> new Reply(200, "text/plain; version=0.0.4; charset=utf-8", metricsText())));
        bound.put("admin", admin.bind(config.admin()));

        // Policies pushed through the registry replace the defaults without a restart.
        policyWatch = registry.watchPolicies(this::onPolicyDocuments);

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
        if (draining || !appAnswered) {
            return false;
        }
        if (!registeredOnce) {
            Registration r = registration;
            registeredOnce = r != null && r.isRegistered();
        }
        return registeredOnce;
    }

    private volatile boolean registeredOnce;

    private Reply readyReply() {
        if (isReady()) {
            return Reply.text(200, "ready\n");
        }
        String why = draining ? "draining" : !appAnswered ? "app at " + config.app().getHostString() + ":"
                + config.app().getPort() + " not answering yet" : "registration with " + config.registryUrl() + " pending";
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
     * A new set of policy documents from the registry. All are parsed first; if any is invalid the sidecar keeps the
     * policies it has (a document is applied whole or not at all) and says why in /config.
     */
    private void onPolicyDocuments(Map<String, String> documents) {
        Map<String, dev.weft.dataplane.resilience.ServicePolicy> merged = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, String> d : new TreeMap<>(documents).entrySet()) {
            try {
                merged.putAll(dev.weft.dataplane.resilience.PolicyDocument.parse(d.getKey(), d.getValue()));
            } catch (dev.weft.dataplane.resilience.PolicyDocument.PolicyException e) {
                policyRejections.increment();
                policyStatus = "rejected, keeping previous policies: " + e.getMessage();
                System.err.println("weft sidecar '" + config.service() + "': policy " + policyStatus);
                return;
            }
        }
        applyPolicies(merged);
        policyDocuments = Map.copyOf(documents);
        policyStatus = "applied " + documents.keySet();
    }

    /**
     * Applies resilience policies by destination service ("*" = every service without its own); the local
     * service's entry also governs the inbound side (rate limits, timeout towards the app).
     */
    public void applyPolicies(Map<String, dev.weft.dataplane.resilience.ServicePolicy> policies) {
        router.applyPolicies(policies);
        appCluster.policy(router.policyFor(config.service()));
        applyInboundLimit(appCluster.policy().concurrencyLimit());
    }

    /**
     * The inbound concurrency limit in front of the app: learned under {@code --capacity} and shedding at once, or
     * {@code --capacity} with the bounded queue. Only a changed limit is re-applied (learning starts over).
     */
    private synchronized void applyInboundLimit(dev.weft.dataplane.resilience.ServicePolicy.ConcurrencyLimit limit) {
        if (limit.equals(inboundLimit)) {
            return;
        }
        inboundLimit = limit;
        EndpointState app = appCluster.endpoints().getFirst();
        if (limit.adaptive()) {
            int max = limit.max() > 0 ? limit.max() : config.capacity() > 0 ? config.capacity() : 1000;
            if (config.capacity() > 0) {
                max = Math.min(max, config.capacity());
            }
            int min = Math.min(limit.min(), max);
            int initial = limit.initial() > 0 ? Math.max(min, Math.min(limit.initial(), max)) : max;
            app.limitAdaptively(initial, min, max);
        } else {
            app.limitByCapacityOnly();
        }
        appCluster.shedWhenFull(limit.adaptive());
    }

    /** The policy in force for calls to {@code service}. */
    public dev.weft.dataplane.resilience.ServicePolicy policyFor(String service) {
        return router.policyFor(service);
    }

    /** What happened to the last policy documents received (applied, or rejected and why). */
    public String policyStatus() {
        return policyStatus;
    }

    public SidecarMetrics metrics() {
        return metrics;
    }

    public Map<String, InetSocketAddress> boundAddresses() {
        return Map.copyOf(bound);
    }

    private String configJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("service", config.service());
        m.put("instanceId", config.instanceId());
        m.put("app", str(config.app()));
        Map<String, String> listeners = new LinkedHashMap<>();
        bound.forEach((k, v) -> listeners.put(k, str(v)));
        m.put("listeners", listeners);
        m.put("registry", config.registryUrl());
        m.put("weight", config.weight());
        m.put("capacity", config.capacity());
        m.put("queueSize", config.queueSize());
        m.put("queueTimeoutMillis", config.queueTimeout().toMillis());
        m.put("leaseTtlMillis", config.leaseTtl().toMillis());
        m.put("balancer", router.balancerName());
        m.put("collaborator", config.collaborator());
        m.put("workers", config.workers());
        m.put("transport", transport.name());
        m.put("meshProtocol", config.meshProtocol());
        m.put("meshConnectionsPerPeer", config.meshConnectionsPerPeer());
        m.put("ready", isReady());
        m.put("draining", draining);
        Map<String, Object> services = new TreeMap<>();
        for (Cluster c : router.clusters()) {
            services.put(c.service(), clusterJson(c));
        }
        m.put("upstreams", services);
        Map<String, Object> pol = new LinkedHashMap<>();
        pol.put("status", policyStatus);
        pol.put("documents", new TreeMap<>(policyDocuments).keySet());
        pol.put("rejections", policyRejections.sum());
        pol.put("inbound", policyJson(appCluster.policy()));
        m.put("policies", pol);
        m.put("inbound", inboundJson());
        m.put("registryHealth", healthJson(registry.health()));
        m.put("observability", observability.describe());
        // jackson-core's generator, not databind's ObjectMapper: no 600 classes for one page (JsonValues says why).
        return new String(JsonValues.write(m, true), StandardCharsets.UTF_8) + "\n";
    }

    private static Map<String, Object> policyJson(dev.weft.dataplane.resilience.ServicePolicy p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("timeoutMillis", p.timeout() == null ? null : p.timeout().toMillis());
        m.put("retries", Map.of("attempts", p.retry().attempts(), "budget", p.retry().budgetRatio(),
                "minPerSecond", p.retry().minPerSecond(), "on5xx", p.retry().retryOn5xx()));
        m.put("outlierDetection", Map.of("consecutiveFailures", p.outlier().consecutiveFailures(),
                "baseEjectionMillis", p.outlier().baseEjection().toMillis(),
                "maxEjectionMillis", p.outlier().maxEjection().toMillis(),
                "maxEjectedPercent", p.outlier().maxEjectedPercent()));
        m.put("rateLimit", Map.of("requestsPerSecond", p.rateLimit(), "burst", p.burstFor(p.rateLimit()), "perCaller", p.perCallerRate()));
        var cl = p.concurrencyLimit();
        m.put("concurrencyLimit", Map.of("adaptive", cl.adaptive(), "min", cl.min(), "max", cl.max(),
                "initial", cl.initial()));
        m.put("circuitBreaker", Map.of("maxConnections", p.maxConnections()));
        var ol = p.outboundLimit();
        m.put("outboundLimit", Map.of("adaptive", ol.adaptive(), "min", ol.min(), "max", ol.max(),
                "initial", ol.initial()));
        m.put("routes", p.routes().stream().map(r -> r.name() + " " + (r.method() == null ? "*" : r.method()) + " "
                + (r.pathPrefix() == null ? "/" : r.pathPrefix())).toList());
        return m;
    }

    /** What protects the local app right now: the limit in force (learned or fixed), and what it refused. */
    private Map<String, Object> inboundJson() {
        EndpointState app = appCluster.endpoints().getFirst();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("concurrencyLimit", appCluster.shedsWhenFull() ? "adaptive" : "fixed");
        m.put("limit", app.effectiveCapacity());
        m.put("capacity", config.capacity());
        m.put("inFlight", app.inFlight());
        m.put("queued", appCluster.queued());
        m.put("shed", appCluster.shed());
        m.put("rejectedQueueFull", appCluster.rejectedQueueFull());
        m.put("rejectedQueueTimeout", appCluster.rejectedTimeout());
        m.put("latencyEwmaMillis", Math.round(app.latencyEwmaMillis() * 100) / 100.0);
        m.put("appConnectionsCircuitOpen", appUpstream.circuitOpen());
        return m;
    }

    private static Map<String, Object> clusterJson(Cluster c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("known", c.isKnown());
        m.put("balancer", c.balancer());
        m.put("queued", c.queued());
        m.put("policy", policyJson(c.policy()));
        m.put("retries", c.retries());
        m.put("retryBudgetExhausted", c.retryBudget().exhausted());
        m.put("timeouts", c.timeouts());
        m.put("rateLimited", c.rateLimited());
        var ol = c.outboundLimit();
        Map<String, Object> olm = new LinkedHashMap<>();
        olm.put("mode", ol.adaptive() ? "adaptive" : "off");
        olm.put("limit", c.outboundLimitNow());
        olm.put("inFlight", ol.inFlight());
        olm.put("shed", c.outboundShed());
        m.put("outboundLimit", olm);
        m.put("endpoints", c.endpoints().stream().map(e -> {
            Map<String, Object> em = new LinkedHashMap<>();
            em.put("id", e.endpoint().id());
            em.put("address", e.address());
            em.put("weight", e.weight());
            em.put("capacity", e.capacity());
            em.put("inFlight", e.inFlight());
            em.put("requests", e.requests());
            em.put("failures", e.failures());
            em.put("latencyEwmaMillis", Math.round(e.latencyEwmaMillis() * 100) / 100.0);
            em.put("effectiveCapacity", e.effectiveCapacity());
            em.put("ejected", e.isEjected());
            em.put("ejections", e.ejectionsTotal());
            return em;
        }).toList());
        return m;
    }

    private static Map<String, Object> healthJson(RegistryHealth h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", h.backend());
        m.put("target", h.target());
        m.put("connected", h.connected());
        m.put("lastContact", h.lastContact() == null ? null : h.lastContact().toString());
        m.put("lastError", h.lastError());
        m.put("reconnects", h.reconnects());
        return m;
    }

    private static String str(InetSocketAddress a) {
        return a == null ? null : a.getHostString() + ":" + a.getPort();
    }

    private String metricsText() {
        PrometheusText p = new PrometheusText();
        String svc = config.service();
        for (TrafficMetrics t : List.of(metrics.outbound, metrics.inbound)) {
            for (int cls = 1; cls <= 5; cls++) {
                p.counter("weft_requests_total", "Requests finished, by direction and status class.",
                        t.requests(cls), "service", svc, "direction", t.direction(), "status_class", cls + "xx");
            }
        }
        for (TrafficMetrics t : List.of(metrics.outbound, metrics.inbound)) {
            p.counter("weft_mesh_errors_total", "Responses generated by the sidecar itself (no capacity, unreachable peer or app...).",
                    t.meshErrors(), "service", svc, "direction", t.direction());
        }
        for (TrafficMetrics t : List.of(metrics.outbound, metrics.inbound)) {
            p.gauge("weft_requests_in_flight", "Requests in flight.", t.inFlight(), "service", svc, "direction", t.direction());
        }
        for (TrafficMetrics t : List.of(metrics.outbound, metrics.inbound)) {
            p.counter("weft_body_bytes_total", "Body bytes carried, by direction (in = from the caller, out = to it).",
                    t.bytesIn(), "service", svc, "direction", t.direction(), "flow", "in");
            p.counter("weft_body_bytes_total", "", t.bytesOut(), "service", svc, "direction", t.direction(), "flow", "out");
        }
        for (TrafficMetrics t : List.of(metrics.outbound, metrics.inbound)) {
            p.histogram("weft_request_duration_seconds", "Request latency seen by the sidecar.", t.latency(),
                    "service", svc, "direction", t.direction());
        }
        p.counter("weft_http_rejected_total", "Requests rejected before forwarding, by reason.", metrics.badRequests.sum(), "reason", "malformed");
        p.counter("weft_http_rejected_total", "", metrics.headersTooLarge.sum(), "reason", "headers_too_large");
        p.counter("weft_http_rejected_total", "", metrics.smuggling.sum(), "reason", "conflicting_framing");
        p.counter("weft_http_rejected_total", "", metrics.requestHeadTimeouts.sum(), "reason", "request_timeout");
        p.counter("weft_http_rejected_total", "", metrics.unknownService.sum(), "reason", "unknown_service");
        metrics.rejected.render(p);
        p.counter("weft_app_connect_failures_total", "Failed connections to the local app.", metrics.appConnectFailures.sum());
        p.counter("weft_app_protocol_errors_total", "Answers from the local app refused as malformed HTTP/1.1 (502 app-protocol-error).", appUpstream.protocolErrors());
        p.counter("weft_app_connections_opened_total", "Connections opened to the local app.", metrics.appConnectionsOpened.sum());
        p.counter("weft_app_rejected_total", "Inbound requests refused because the app was at capacity and the queue full or timed out.", metrics.appRejectedAtCapacity.sum());
        p.gauge("weft_app_in_flight", "Requests in flight at the local app.", appCluster.endpoints().stream().mapToInt(EndpointState::inFlight).sum());
        p.gauge("weft_app_queue_depth", "Inbound requests waiting for app capacity.", appCluster.queued());
        p.counter("weft_app_shed_total", "Inbound requests refused at once (503 inbound-limit) by the adaptive concurrency limit.", appCluster.shed());
        p.gauge("weft_app_concurrency_limit", "Requests the local app may have in flight now (learned, or --capacity).", appCluster.limit());
        p.counter("weft_upstream_circuit_open_total", "Calls failed fast because the endpoint had circuit-breaker max-connections open.", appUpstream.circuitOpen(), "upstream", "app", "limit", "max_connections");
        if (httpMeshUpstream != null) {
            p.counter("weft_upstream_circuit_open_total", "", httpMeshUpstream.circuitOpen(), "upstream", "peer_sidecars", "limit", "max_connections");
        }
        p.counter("weft_streams_reset_total", "Mesh streams ended abnormally.", metrics.streamsReset.sum());
        p.counter("weft_connections_opened_total", "Connections opened, by kind.", metrics.downstreamConnections.sum(), "kind", "app_to_sidecar");
        p.counter("weft_connections_opened_total", "", metrics.meshConnectionsAccepted.sum(), "kind", "mesh_inbound");
        p.counter("weft_connections_opened_total", "", meshPool.opened(), "kind", "mesh_outbound");
        p.gauge("weft_connections_open", "Connections open, by kind.", outbound.openConnections(), "kind", "app_to_sidecar");
        p.gauge("weft_connections_open", "", inbound.openConnections(), "kind", "mesh_inbound");
        p.gauge("weft_connections_open", "", meshPool.openConnections(), "kind", "mesh_outbound");
        p.counter("weft_mesh_connect_failures_total", "Failed dials to peer sidecars.", meshPool.connectFailures());
        p.counter("weft_retries_total", "Requests retried on another endpoint after a failed dial (nothing had been sent).", metrics.connectRetries.sum(), "reason", "connect_failure");
        for (Cluster c : router.clusters()) {
            p.gauge("weft_upstream_queue_depth", "Outbound requests waiting for capacity, per destination service.", c.queued(), "upstream", c.service());
        }
        for (Cluster c : router.clusters()) {
            p.counter("weft_upstream_rejected_total", "Outbound requests refused without forwarding, by reason.", c.rejectedQueueFull(), "upstream", c.service(), "reason", "queue_full");
            p.counter("weft_upstream_rejected_total", "", c.rejectedTimeout(), "upstream", c.service(), "reason", "queue_timeout");
            p.counter("weft_upstream_rejected_total", "", c.rejectedNoEndpoints(), "upstream", c.service(), "reason", "no_endpoints");
            p.counter("weft_upstream_rejected_total", "", c.outboundShed(), "upstream", c.service(), "reason", "outbound_limit");
        }
        for (Cluster c : router.clusters()) {
            p.gauge("weft_upstream_concurrency_limit", "Outbound requests this sidecar may have in flight to the service now (learned; 0 = no outbound limit).", c.outboundLimitNow(), "upstream", c.service());
        }
        for (Cluster c : router.clusters()) {
            p.gauge("weft_upstream_in_flight", "Outbound requests in flight to the service, from request read to answer head.", c.outboundLimit().inFlight(), "upstream", c.service());
        }
        for (Cluster c : router.clusters()) {
            for (EndpointState e : c.endpoints()) {
                p.gauge("weft_endpoint_in_flight", "Requests in flight per upstream endpoint.", e.inFlight(), "upstream", c.service(), "endpoint", e.endpoint().id());
            }
        }
        for (Cluster c : router.clusters()) {
            for (EndpointState e : c.endpoints()) {
                p.counter("weft_endpoint_requests_total", "Requests sent per upstream endpoint.", e.requests(), "upstream", c.service(), "endpoint", e.endpoint().id());
            }
        }
        balancerMetrics(p);
        p.counter("weft_wmp_frames_total", "WMP frames, by direction.", codecMetrics.framesIn(), "direction", "in");
        p.counter("weft_wmp_frames_total", "", codecMetrics.framesOut(), "direction", "out");
        p.counter("weft_wmp_bytes_total", "WMP bytes on the wire, by direction.", codecMetrics.bytesIn(), "direction", "in");
        p.counter("weft_wmp_bytes_total", "", codecMetrics.bytesOut(), "direction", "out");
        p.counter("weft_wmp_decode_errors_total", "Malformed WMP input (connection closed with GOAWAY).", codecMetrics.totalErrors());
        RegistryHealth h = registry.health();
        p.gauge("weft_registry_connected", "1 when the registry answered the last call.", h.connected() ? 1 : 0, "backend", String.valueOf(h.backend()));
        p.counter("weft_registry_reconnects_total", "Reconnections to the registry.", h.reconnects());
        if (h.lastContact() != null) {
            p.gauge("weft_registry_last_contact_age_seconds", "Seconds since the registry last answered.",
                    Math.max(0, java.time.Duration.between(h.lastContact(), java.time.Instant.now()).toMillis() / 1000.0));
        }
        Registration r = registration;
        p.gauge("weft_registered", "1 while this instance's registration is accepted by the registry.",
                r != null && r.isRegistered() ? 1 : 0);
        observability.render(p);
        p.gauge("weft_ready", "1 when the sidecar is ready.", isReady() ? 1 : 0);
        p.gauge("weft_uptime_seconds", "Seconds since start.", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedNanos));
        return p.toString();
    }

    /**
     * The balancer's and resilience policies' decisions, per destination (the local app counts as {@code app}):
     * ejections, retries, sheds (rate limits), timeouts and an exhausted retry budget.
     */
    private void balancerMetrics(PrometheusText p) {
        List<Cluster> clusters = new java.util.ArrayList<>(router.clusters());
        clusters.add(appCluster);
        for (Cluster c : clusters) {
            for (EndpointState e : c.endpoints()) {
                p.counter("weft_endpoint_ejections_total", "Times outlier detection ejected an endpoint.",
                        e.ejectionsTotal(), "upstream", label(c), "endpoint", e.endpoint().id());
            }
        }
        for (Cluster c : clusters) {
            for (EndpointState e : c.endpoints()) {
                p.gauge("weft_endpoint_ejected", "1 while an endpoint is ejected (not chosen by the balancer).",
                        e.isEjected() ? 1 : 0, "upstream", label(c), "endpoint", e.endpoint().id());
            }
        }
        for (Cluster c : clusters) {
            p.counter("weft_upstream_retries_total", "Retries made by policy (safe cases only, under the retry budget).",
                    c.retries(), "upstream", label(c));
        }
        for (Cluster c : clusters) {
            p.counter("weft_upstream_retry_budget_exhausted_total", "Retries refused because the retry budget was spent.",
                    c.retryBudget().exhausted(), "upstream", label(c));
        }
        for (Cluster c : clusters) {
            p.counter("weft_upstream_rate_limited_total", "Requests shed by a local rate limit (429).",
                    c.rateLimited(), "upstream", label(c));
        }
        for (Cluster c : clusters) {
            p.counter("weft_upstream_timeouts_total", "Requests that ran out of their timeout or deadline.",
                    c.timeouts(), "upstream", label(c));
        }
    }

    /** The local app's cluster is named "app:SERVICE" inside; as a label it is just "app". */
    private String label(Cluster c) {
        return c == appCluster ? "app" : c.service();
    }
}
