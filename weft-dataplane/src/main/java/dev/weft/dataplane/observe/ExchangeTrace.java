package dev.weft.dataplane.observe;

/**
 * The events of one exchange, in order. A call may be skipped (an exchange rejected before admission goes straight
 * to {@link #end}). Runs on the exchange's Worker loop. An event's time is {@code System.nanoTime()} at the call
 * (read only by an implementation that keeps it), or, where the exchange reads the clock for itself anyway, the
 * reading it passes ({@code nanos}): in the mesh bench a clock reading costs about as much as the rest of an event
 * (docs/benchmarks.md, session 14).
 */
public interface ExchangeTrace {

    /**
     * The destination is known: called once the request is routed, before admission, so that requests refused
     * before any endpoint is chosen (queue full, shed, no endpoints) are still counted against their destination.
     *
     * @param destinationService the service the request goes to
     * @param route              the policy route that matched, or null to keep the route named by path prefix
     */
    default void routed(String destinationService, String route) {}

    /**
     * Admitted: a capacity slot at this endpoint was granted (the queue wait ends here). Called again for each
     * retry; every call after the first counts as one retry.
     */
    default void admitted(String destinationService, String endpointId, String endpointAddress) {}

    /** A pooled upstream connection was obtained (dialled if needed). */
    default void connected() {}

    /** The request head was written upstream, at {@code nanos}. */
    default void sent(long nanos) {}

    /** The answer's head arrived from upstream. */
    default void firstByte(int status) {}

    /**
     * The exchange is over.
     *
     * @param status    status sent downstream (499 when the downstream went away first)
     * @param bytesIn   request body bytes carried
     * @param bytesOut  answer body bytes carried
     * @param error     the sidecar's own error kind (x-weft-error), or null when the upstream answered
     * @param nanos     when it ended
     */
    default void end(int status, long bytesIn, long bytesOut, String error, long nanos) {}

    ExchangeTrace NOOP = new ExchangeTrace() {};
}
