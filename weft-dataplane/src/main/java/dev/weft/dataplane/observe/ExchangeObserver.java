package dev.weft.dataplane.observe;

/**
 * Sees the timeline of every exchange a sidecar carries: the hook for tracing, access logs and per-route metrics.
 * {@link #start} is called when a request arrives, before it is admitted; it may read and set headers (trace
 * context), and returns the per-exchange {@link ExchangeTrace} that receives the later events.
 *
 * <p>Thread: every call runs on the exchange's Worker event loop, on the hot path: implementations must not block
 * and should allocate little. Use {@link #NOOP} when nothing observes.
 */
public interface ExchangeObserver {

    /** Which side of the sidecar the exchange crosses. */
    enum Direction {
        /** The local app calling another service. */
        OUTBOUND,
        /** A peer calling the local app. */
        INBOUND
    }

    /**
     * @param direction   outbound (app → mesh) or inbound (mesh → app)
     * @param localService the service this sidecar belongs to
     * @param method      HTTP method
     * @param path        request target as received
     * @param headers     the request's headers; setting one changes what is forwarded
     * @param peer        the downstream's address (the app, or the calling sidecar), may be null
     * @param startNanos  {@code System.nanoTime()} when the request arrived: the exchange's own clock reading,
     *                    so that observing it reads the clock no second time
     */
    ExchangeTrace start(Direction direction, String localService, String method, String path, HeaderAccess headers,
                        String peer, long startNanos);

    ExchangeObserver NOOP = (direction, localService, method, path, headers, peer, startNanos) -> ExchangeTrace.NOOP;
}
