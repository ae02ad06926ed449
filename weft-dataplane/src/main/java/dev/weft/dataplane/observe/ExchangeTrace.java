package dev.weft.dataplane.observe;

/**
 * The events of one exchange, in order. A call may be skipped (an exchange rejected before admission goes straight
 * to {@link #end}). Runs on the exchange's Worker loop; {@code System.nanoTime()} at the call is the event's time.
 */
public interface ExchangeTrace {

    /** Admitted: a capacity slot at this endpoint was granted (the queue wait ends here). */
    default void admitted(String destinationService, String endpointId, String endpointAddress) {}

    /** A pooled upstream connection was obtained (dialled if needed). */
    default void connected() {}

    /** The request head was written upstream. */
    default void sent() {}

    /** The answer's head arrived from upstream. */
    default void firstByte(int status) {}

    /**
     * The exchange is over.
     *
     * @param status    status sent downstream (499 when the downstream went away first)
     * @param bytesIn   request body bytes carried
     * @param bytesOut  answer body bytes carried
     * @param error     the sidecar's own error kind (x-weft-error), or null when the upstream answered
     */
    default void end(int status, long bytesIn, long bytesOut, String error) {}

    ExchangeTrace NOOP = new ExchangeTrace() {};
}
