package dev.weft.dataplane.balancing;

import dev.weft.dataplane.exchange.Failures;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.exchange.ExchangeContext;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.upstream.Upstream;
import io.netty.util.concurrent.Future;


/**
 * Admission to an endpoint, per attempt, and what each attempt's outcome teaches the balancer. Toward peers: the
 * Worker's balancer picks a slot (a retry avoids the endpoint that just failed; ring-hash keys on its header), and
 * every outcome feeds outlier detection and the latency-aware balancer. Toward the local app: a slot under the
 * app's concurrency limit, whose learned limit each answer's latency teaches.
 *
 * <p>Thread: the exchange's loop; stateless (the state is the cluster's and its endpoints').
 */
public final class BalancePhase implements Phase {
    private final boolean app;
    private final SidecarMetrics metrics;

    private BalancePhase(boolean app, SidecarMetrics metrics) {
        this.app = app;
        this.metrics = metrics;
    }

    public static BalancePhase toPeers() {
        return new BalancePhase(false, null);
    }

    public static BalancePhase toApp(SidecarMetrics metrics) {
        return new BalancePhase(true, metrics);
    }

    @Override
    public String name() {
        return "balance";
    }

    /**
     * A slot now, when one is free and nobody waits (the usual case): no future, no listener. Null sends the exchange
     * to {@link #admit}, which queues or refuses. On the exchange's loop.
     */
    public EndpointState admitNow(ExchangeContext x) {
        Cluster c = x.cluster();
        if (app) {
            return c.acquireNow(x.loop(), 0, null);
        }
        return c.acquireNow(x.loop(), hashOf(x, c), x.lastEndpoint());
    }

    private static long hashOf(ExchangeContext x, Cluster c) {
        String hashHeader = c.hashHeader();
        // Lower case already (Balancer.named), as the head's field names are.
        return hashHeader == null ? 0 : Balancer.hashOf(x.head().get(hashHeader));
    }

    /** The Collaborator's admit step: a slot now, or a place in the cluster's queue. Completes on the exchange's loop. */
    public Future<EndpointState> admit(ExchangeContext x) {
        Cluster c = x.cluster();
        if (app) {
            Future<EndpointState> f = c.acquire(x.loop());
            if (f.isDone()) {
                countRefusal(f);
            } else {
                f.addListener(done -> countRefusal(f));
            }
            return f;
        }
        return c.acquire(x.loop(), hashOf(x, c), x.lastEndpoint());
    }

    private void countRefusal(Future<EndpointState> f) {
        if (!f.isSuccess() && !(f.cause() instanceof ShedException)) {
            metrics.appRejectedAtCapacity.increment(); // queue full or timed out; sheds have their own count
        }
    }

    @Override
    public boolean onAttempt(ExchangeContext x, int status, boolean unprocessed, Throwable failure) {
        EndpointState e = x.endpoint();
        if (e == null) {
            return false;
        }
        long latency = x.sentNanos() != 0 ? System.nanoTime() - x.sentNanos() : -1;
        if (app) {
            if (failure == null) {
                // The app's latency teaches the inbound concurrency limit; a 503 from the app is it shedding itself.
                e.recordLatency(latency, x.inFlightAtSend(), status == 503);
            } else if (failure instanceof Failures.Timeout && latency >= 0) {
                e.recordLatency(latency, x.inFlightAtSend(), true); // the app is too slow
            } else if (failure instanceof Upstream.ConnectException) {
                metrics.appConnectFailures.increment();
            }
            return false;
        }
        Cluster c = x.cluster();
        if (failure == null) {
            if (unprocessed && status != 503) {
                c.recordOutcome(e, true); // the app behind that sidecar is down: let outlier detection see it
            } else if (!unprocessed) {
                // Feeds the latency-aware balancer and the learned limit; a 503 is the upstream shedding. A shedding
                // endpoint's quick refusals must not feed the latency average, or it would look fast.
                e.recordLatency(latency, x.inFlightAtSend(), status == 503);
                c.recordOutcome(e, status >= 500);
            }
        } else if (!(failure instanceof NoCapacityException) && !(failure instanceof Upstream.CircuitOpenException)
                && !(failure instanceof ExchangeError refused && refused.status() < 500)) {
            // Refused by our own limits, or a request refused for what it is (431, 400), nothing says the endpoint is
            // unwell; anything else does, an answer it sent that could not be relayed (502, 504) included.
            e.recordFailure();
            if (latency >= 0) {
                e.recordLatency(latency, x.inFlightAtSend(), true);
            }
            c.recordOutcome(e, true);
            if (failure instanceof Upstream.ConnectException) {
                e.markUnreachable();
            }
        }
        return false;
    }
}
