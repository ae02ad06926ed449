package dev.weft.dataplane.admin;

import dev.weft.dataplane.SidecarConfig;
import dev.weft.dataplane.admin.AdminServer.Reply;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.inbound.LocalApp;
import dev.weft.dataplane.observe.Observability;
import dev.weft.dataplane.outbound.Router;
import dev.weft.dataplane.resilience.PolicyUpdates;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.dataplane.transport.Transport;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.RegistryHealth;
import dev.weft.registry.support.JsonValues;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@code /config}: what the sidecar was started with and what it is doing now, as JSON: its settings and listeners,
 * every destination's endpoints and policy, the policy documents applied, what protects the local app, the
 * registry's health and what is observed.
 *
 * <p>Thread: rendered on the admin connection's Worker; it only reads counters and snapshots.
 */
public final class ConfigPage implements Supplier<Reply> {
    private final SidecarConfig config;
    private final Map<String, InetSocketAddress> listeners;
    private final Transport transport;
    private final Router router;
    private final LocalApp app;
    private final PolicyUpdates policies;
    private final Registry registry;
    private final Observability observability;
    private final BooleanSupplier ready;
    private final BooleanSupplier draining;
    private final Map<String, Supplier<?>> sections = new LinkedHashMap<>();

    /**
     * @param listeners every listener bound so far, by name; read at each request, so the admin listener bound after
     *                  this page was made shows too
     */
    public ConfigPage(SidecarConfig config, Map<String, InetSocketAddress> listeners, Transport transport,
                      Router router, LocalApp app, PolicyUpdates policies, Registry registry,
                      Observability observability, BooleanSupplier ready, BooleanSupplier draining) {
        this.config = config;
        this.listeners = listeners;
        this.transport = transport;
        this.router = router;
        this.app = app;
        this.policies = policies;
        this.registry = registry;
        this.observability = observability;
        this.ready = ready;
        this.draining = draining;
    }

    /**
     * Adds a section shown after the others, computed at each request (e.g. the workload identity). Call before the
     * page is served: the admin listener's start publishes it to the Workers.
     */
    public ConfigPage section(String name, Supplier<?> value) {
        sections.put(name, value);
        return this;
    }

    @Override
    public Reply get() {
        return new Reply(200, "application/json", json());
    }

    private String json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("service", config.service());
        m.put("instanceId", config.instanceId());
        m.put("version", BuildInfo.version());
        m.put("app", str(config.app()));
        Map<String, String> bound = new LinkedHashMap<>();
        listeners.forEach((k, v) -> bound.put(k, str(v)));
        m.put("listeners", bound);
        m.put("registry", Registries.redact(config.registryUrl()));
        m.put("weight", config.weight());
        m.put("capacity", config.capacity());
        m.put("queueSize", config.queueSize());
        m.put("queueTimeoutMillis", config.queueTimeout().toMillis());
        m.put("leaseTtlMillis", config.leaseTtl().toMillis());
        m.put("drainTimeoutMillis", config.drainTimeout().toMillis());
        Map<String, Object> timeouts = new LinkedHashMap<>();
        timeouts.put("requestHeadMillis", config.timeouts().requestHead().toMillis());
        timeouts.put("idleMillis", config.timeouts().idle().toMillis());
        timeouts.put("bodyMillis", config.timeouts().body().toMillis());
        m.put("connectionTimeouts", timeouts);
        m.put("appHealth", config.appHealth().describe());
        m.put("balancer", router.balancerName());
        m.put("collaborator", config.collaborator().label());
        m.put("workers", config.workers());
        m.put("transport", transport.name());
        m.put("meshProtocol", config.meshProtocol().label());
        m.put("meshConnectionsPerPeer", config.meshConnectionsPerPeer());
        m.put("ready", ready.getAsBoolean());
        m.put("draining", draining.getAsBoolean());
        Map<String, Object> services = new TreeMap<>();
        for (Cluster c : router.clusters()) {
            services.put(c.service(), clusterJson(c));
        }
        m.put("upstreams", services);
        Map<String, Object> pol = new LinkedHashMap<>();
        pol.put("status", policies.status());
        pol.put("documents", policies.documentNames());
        pol.put("rejections", policies.rejections());
        pol.put("inbound", policyJson(app.cluster().policy()));
        m.put("policies", pol);
        m.put("inbound", inboundJson());
        m.put("registryHealth", healthJson(registry.health()));
        m.put("observability", observability.describe());
        sections.forEach((name, value) -> m.put(name, value.get()));
        // jackson-core's generator, not databind's ObjectMapper: no 600 classes for one page (JsonValues says why).
        return new String(JsonValues.write(m, true), StandardCharsets.UTF_8) + "\n";
    }

    private static Map<String, Object> policyJson(ServicePolicy p) {
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
        m.put("authorization", p.authorization().describe());
        m.put("routes", p.routes().stream().map(r -> r.name() + " " + (r.method() == null ? "*" : r.method()) + " "
                + (r.pathPrefix() == null ? "/" : r.pathPrefix())).toList());
        return m;
    }

    /** What protects the local app right now: the limit in force (learned or fixed), and what it refused. */
    private Map<String, Object> inboundJson() {
        Cluster appCluster = app.cluster();
        EndpointState e = app.endpoint();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("concurrencyLimit", appCluster.shedsWhenFull() ? "adaptive" : "fixed");
        m.put("limit", e.effectiveCapacity());
        m.put("capacity", config.capacity());
        m.put("inFlight", e.inFlight());
        m.put("queued", appCluster.queued());
        m.put("shed", appCluster.shed());
        m.put("rejectedQueueFull", appCluster.rejectedQueueFull());
        m.put("rejectedQueueTimeout", appCluster.rejectedTimeout());
        m.put("latencyEwmaMillis", Math.round(e.latencyEwmaMillis() * 100) / 100.0);
        m.put("appConnectionsCircuitOpen", app.upstream().circuitOpen());
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
}
