package dev.weft.dataplane.exchange;

import dev.weft.dataplane.authz.AuthorizationPhase;
import dev.weft.dataplane.balancing.BalancePhase;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.outbound.CallerPhase;
import dev.weft.dataplane.outbound.Destination;
import dev.weft.dataplane.outbound.RoutePhase;
import dev.weft.dataplane.resilience.DeadlinePhase;
import dev.weft.dataplane.resilience.OutboundLimitPhase;
import dev.weft.dataplane.resilience.RateLimitPhase;
import dev.weft.dataplane.resilience.RetryPhase;
import dev.weft.dataplane.upstream.Upstream;

import java.util.ArrayList;
import java.util.List;

/**
 * The policy of one listener as an ordered stack of {@link Phase}s, and where its exchanges start. The two stacks of
 * a sidecar are assembled here, and only here; each line says why its phase sits where it does. An exchange runs the
 * phases' request checks top to bottom, then each attempt's balance and endpoint steps, then the phases' ends bottom
 * to top. The gateway adds its phases to these lists.
 *
 * <p>Thread: built once at start; read-only afterwards, shared by every Worker.
 */
public final class PolicyStack {
    private final Phase[] phases;
    private final BalancePhase balance;
    private final boolean retries;
    private final Destination destination;
    private final Upstream upstream;
    private final Collaborator collaborator;
    private final SidecarMetrics metrics;
    private final TrafficMetrics traffic;
    private final ExchangeObserver observer;
    private final ExchangeObserver.Direction direction;
    private final String localService;

    private PolicyStack(List<Phase> phases, Destination destination, Upstream upstream, Collaborator collaborator,
                        SidecarMetrics metrics, ExchangeObserver observer, ExchangeObserver.Direction direction,
                        String localService) {
        this.phases = phases.toArray(Phase[]::new);
        BalancePhase b = null;
        boolean r = false;
        for (Phase p : this.phases) {
            b = p instanceof BalancePhase bp ? bp : b;
            r |= p instanceof RetryPhase;
        }
        if (b == null || this.phases[this.phases.length - 1] != b) {
            throw new IllegalArgumentException("a policy stack must end with its balance phase (got " + names() + ")");
        }
        this.balance = b;
        this.retries = r;
        this.destination = destination;
        this.upstream = upstream;
        this.collaborator = collaborator;
        this.metrics = metrics;
        this.traffic = direction == ExchangeObserver.Direction.INBOUND ? metrics.inbound : metrics.outbound;
        this.observer = observer;
        this.direction = direction;
        this.localService = localService;
    }

    /** The app's calls to other services; the upstream is the mesh link (WMP, or HTTP/1.1 to peer sidecars). */
    public static PolicyStack outbound(Destination destination, Upstream mesh, Collaborator collaborator,
                                       SidecarMetrics metrics, ExchangeObserver observer, String localService) {
        List<Phase> p = new ArrayList<>();
        // First: every later phase works on the destination's cluster and the policy route the request matched.
        p.add(new RoutePhase(destination, metrics));
        // Before anything is sent: the callee's per-caller limits and its service map key on the caller's name,
        // and the app must not be able to claim another.
        p.add(new CallerPhase(localService));
        // Before the deadline and the queue: what the service cannot take in time is refused at once (503), before
        // it costs a timer, a queue place or a byte on the mesh.
        p.add(new OutboundLimitPhase());
        // Above retry: every attempt, the retries included, stays inside the one budget the caller gave.
        p.add(new DeadlinePhase());
        // Above balance: a retry goes back through the balancer, which then avoids the endpoint that just failed.
        p.add(new RetryPhase(metrics));
        // Last: picks an endpoint slot per attempt and learns from each outcome (outlier detection, latency).
        p.add(BalancePhase.toPeers());
        return new PolicyStack(p, destination, mesh, collaborator, metrics, observer,
                ExchangeObserver.Direction.OUTBOUND, localService);
    }

    /** The mesh's calls to the local app; the upstream is the app's pooled HTTP/1.1 connections. */
    public static PolicyStack inbound(Cluster app, Upstream appUpstream, Collaborator collaborator,
                                      SidecarMetrics metrics, ExchangeObserver observer, String localService) {
        List<Phase> p = new ArrayList<>();
        Destination destination = Destination.app(app);
        // First: names the app's cluster and the policy route, which the rate limit and the deadline read.
        p.add(new RoutePhase(destination, metrics));
        // Before the rate limit: a denied request must not spend the tokens the service's allowed callers share.
        p.add(new AuthorizationPhase(metrics));
        // Before admission: a request over the service's rate never takes one of the app's slots.
        p.add(new RateLimitPhase(localService));
        // The caller's remaining budget (or this service's own timeout) bounds the app's time too.
        p.add(new DeadlinePhase());
        // No retry phase: the app is one instance; the caller's sidecar retries elsewhere when told 'unprocessed'.
        // Last: a slot under the app's concurrency limit (learned, shedding at once, or a bounded queue).
        p.add(BalancePhase.toApp(metrics));
        return new PolicyStack(p, destination, appUpstream, collaborator, metrics, observer,
                ExchangeObserver.Direction.INBOUND, localService);
    }

    /**
     * A request's head arrived: its exchange, to be given what body came with the head and then carried
     * ({@link ProxyExchange#carry()}, which runs the phases' request checks).
     *
     * @param peer          the downstream's address, for traces and logs
     * @param clientAddress the original client's address for X-Forwarded-For, or null on the mesh's second hop
     */
    public ProxyExchange open(Downstream downstream, RequestHead head, String peer, String clientAddress) {
        long start = System.nanoTime();
        traffic.started();
        ExchangeTrace trace = observer.start(direction, localService, head.method(), head.path(), head, peer, start);
        ProxyExchange x = ExchangeSpares.ofThisLoop().take(); // open() runs on the downstream's loop
        if (x == null) {
            return new RecoveringExchange(this, downstream, head, start, trace, clientAddress);
        }
        x.reopen(this, downstream, head, start, trace, clientAddress);
        return x;
    }

    /** A request refused before it had an exchange (a malformed head): counted and traced like any other. */
    public void refused(ExchangeError e) {
        traffic.started();
        long now = System.nanoTime();
        traffic.finished(e.status(), now, now, true);
    }

    Phase[] phases() {
        return phases;
    }

    public BalancePhase balance() {
        return balance;
    }

    /** Whether this stack retries (then a whole small body is kept for a second attempt). */
    boolean retries() {
        return retries;
    }

    Upstream upstream() {
        return upstream;
    }

    Collaborator collaborator() {
        return collaborator;
    }

    public SidecarMetrics metrics() {
        return metrics;
    }

    public TrafficMetrics traffic() {
        return traffic;
    }

    /** The upstream is the local app (inbound), not a peer sidecar. */
    public boolean toApp() {
        return direction == ExchangeObserver.Direction.INBOUND;
    }

    /**
     * Whether an answer's {@code x-weft-unprocessed} is believed: only from a peer sidecar, which sets it itself.
     * An app's answer could carry one too, and it must never make the mesh resend a request.
     */
    boolean trustsUnprocessed() {
        return !toApp();
    }

    public String localService() {
        return localService;
    }

    /** The authority (Host) to send upstream for this exchange. */
    String authority(ProxyExchange x) {
        return destination.authority(x.head(), x.cluster());
    }

    /** The phases' names in order, for /config and errors. */
    public List<String> names() {
        List<String> n = new ArrayList<>();
        for (Phase p : phases) {
            n.add(p.name());
        }
        return n;
    }
}
