package dev.weft.dataplane.exchange;

import dev.weft.dataplane.balancing.UnknownServiceException;
import dev.weft.dataplane.balancing.ShedException;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.NoCapacityException;
import dev.weft.dataplane.upstream.Upstream;

/**
 * What each way an attempt can fail means for the caller: one mapping from a failure to the {@link ExchangeError}
 * the downstream is told, for both directions. The direction only changes the words: the local app refusing is a
 * 502 ({@code app-unavailable}: the app is down), a peer sidecar refusing a 503 ({@code upstream-connect}: try
 * later or elsewhere).
 *
 * <p>Thread: the exchange's loop; stateless.
 */
public final class Failures {
    /** Completes an attempt that a retry replaced; its Collaborator chain ignores it. */
    static final Exception SUPERSEDED = new Exception("superseded by a retry", null, false, false) {};

    /** A step found the exchange already over (the client left); nothing is to be answered. */
    static final Exception ABANDONED = new Exception("exchange abandoned", null, false, false) {};

    private Failures() {}

    /** Whether nothing of the request reached an app: dialling failed, our own limits refused it, or the peer refused the stream. */
    static boolean unprocessed(Throwable cause) {
        return cause instanceof NoCapacityException || cause instanceof Upstream.CircuitOpenException
                || cause instanceof Upstream.ConnectException || cause instanceof UpstreamReset r && r.refused
                || cause instanceof ExchangeError e && e.unprocessed();
    }

    static ExchangeError toError(Throwable cause, ExchangeContext x) {
        PolicyStack stack = x.stack();
        boolean app = stack.toApp();
        Cluster cluster = x.cluster();
        return switch (cause) {
            case ExchangeError e -> {
                if ("headers-too-large".equals(e.kind())) {
                    stack.metrics().headersTooLarge.increment(); // refused by the mesh link rather than the listener
                }
                yield e;
            }
            case Timeout t -> {
                cluster.countTimeout();
                yield new ExchangeError(504, "timeout", t.getMessage(), false);
            }
            case UnknownServiceException u -> {
                stack.metrics().unknownService.increment();
                yield new ExchangeError(503, "unknown-service", u.getMessage(), true);
            }
            case NoCapacityException nc when app && !(nc instanceof ShedException) ->
                    new ExchangeError(503, "app-at-capacity", "app of this sidecar is at capacity: " + nc.getMessage(), true);
            case NoCapacityException nc -> new ExchangeError(503, nc.kind(), nc.getMessage(), true);
            case Upstream.CircuitOpenException c -> new ExchangeError(503, "circuit-open", c.getMessage(), true);
            case Upstream.ConnectException c -> app
                    ? new ExchangeError(502, "app-unavailable", c.getMessage(), true)
                    : new ExchangeError(503, "upstream-connect", c.getMessage(), true);
            default -> app
                    ? new ExchangeError(502, "app-unavailable", cause.getMessage(), false)
                    : new ExchangeError(502, "upstream-reset", cause.getMessage(), false);
        };
    }

    /** The request's deadline passed before its answer started. */
    public static final class Timeout extends Exception {
        Timeout(boolean app) {
            super(app ? "the app did not answer within the request's deadline"
                    : "no answer within the request's deadline (policy timeout or x-weft-deadline-ms)", null, false, false);
        }
    }

    /** The upstream reset the call, or its connection died, before an answer started. */
    public static final class UpstreamReset extends Exception {
        /** The upstream never started on it (a draining peer): safe to try elsewhere. */
        public final boolean refused;

        UpstreamReset(String message, boolean refused) {
            super("upstream reset before answering: " + message, null, false, false);
            this.refused = refused;
        }
    }
}
