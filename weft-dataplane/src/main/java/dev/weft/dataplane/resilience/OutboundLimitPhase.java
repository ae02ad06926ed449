package dev.weft.dataplane.resilience;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.OutboundLimit;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.exchange.ExchangeContext;

/**
 * The limit on this sidecar's requests in flight to a service ({@link OutboundLimit}): beyond what the service can
 * take, 503 {@code outbound-limit} at once (nothing was sent, so the caller may safely try again) instead of a queue.
 * The exchange holds its place until the answer's head, whose latency teaches the limit, or until it ends without
 * one; a timeout is the clearest sign of overload the limit can learn from, and our own quick 503s teach it nothing.
 *
 * <p>Thread: the exchange's loop; the limit itself is shared by the Workers (atomic). The place taken is kept in the
 * exchange ({@link ProxyExchange#phaseToken()}): given back to that same limit object, so a policy change that
 * replaces the limit never unbalances a count.
 */
public final class OutboundLimitPhase implements Phase {
    /** The {@code x-weft-error} of a request refused by the outbound limit. */
    public static final String KIND = "outbound-limit";

    @Override
    public String name() {
        return "outbound-limit";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        Cluster cluster = x.cluster();
        OutboundLimit limit = cluster.outboundLimit();
        int inFlight = cluster.tryEnterOutbound(limit);
        if (inFlight < 0) {
            return new ExchangeError(503, KIND, "weft: outbound concurrency limit " + cluster.outboundLimitNow()
                    + " to service '" + cluster.service() + "' reached", true);
        }
        x.phaseToken(limit);
        x.phaseInt(inFlight);
        return null;
    }

    @Override
    public void onAnswer(ExchangeContext x, int status) {
        leave(x, System.nanoTime() - x.startNanos(), false);
    }

    @Override
    public void onEnd(ExchangeContext x, ExchangeError error) {
        boolean timeout = error != null && error.status() == 504;
        leave(x, timeout ? System.nanoTime() - x.startNanos() : -1, error != null);
    }

    /** Gives the place back once: {@code latencyNanos} negative for no sample. */
    private static void leave(ExchangeContext x, long latencyNanos, boolean dropped) {
        if (x.phaseToken() instanceof OutboundLimit l) {
            x.phaseToken(null);
            l.release(latencyNanos, x.phaseInt(), dropped);
        }
    }
}
