package dev.weft.dataplane.resilience;

import java.time.Duration;

/**
 * The headers that carry a request's remaining time budget and its caller across the mesh.
 * {@code x-weft-deadline-ms} holds the milliseconds left when the request was sent (a relative budget, so clocks need
 * not agree); every hop takes the smaller of its own policy timeout and the budget it received, and passes on what is
 * left. An app that forwards the header on its own calls keeps the whole chain inside the first caller's deadline.
 */
public final class Deadlines {
    public static final String DEADLINE_HEADER = "x-weft-deadline-ms";
    public static final String CALLER_HEADER = "x-weft-caller";
    /**
     * On an answer a sidecar made itself for a request that reached no app (shed by the inbound limit, refused by a
     * full queue or the connection cap, the app's port refusing the dial): the caller's sidecar may then retry it on
     * another instance even when the method is not idempotent, as it does for a refused stream.
     */
    public static final String UNPROCESSED_HEADER = "x-weft-unprocessed";

    private Deadlines() {}

    /**
     * @param startNanos   System.nanoTime() when the request arrived
     * @param timeout      the policy's timeout, or null
     * @param headerValue  the received {@value #DEADLINE_HEADER}, or null
     * @return the absolute deadline in System.nanoTime() terms, or 0 for none
     */
    public static long deadline(long startNanos, Duration timeout, String headerValue) {
        long budget = timeout == null || timeout.isZero() ? Long.MAX_VALUE : timeout.toNanos();
        if (headerValue != null) {
            try {
                long ms = Long.parseLong(headerValue.trim());
                if (ms > 0) {
                    budget = Math.min(budget, ms * 1_000_000L);
                }
            } catch (NumberFormatException ignored) {
                // A malformed budget from a caller is ignored rather than failing its request.
            }
        }
        return budget == Long.MAX_VALUE ? 0 : startNanos + budget;
    }
}
