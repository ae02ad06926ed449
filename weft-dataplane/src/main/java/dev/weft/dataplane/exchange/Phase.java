package dev.weft.dataplane.exchange;

/**
 * One policy decision in an exchange's life: route, rate limit, outbound limit, deadline, retry, balance. Phases are
 * built once per listener and shared by all its exchanges; whatever a phase needs to remember about one request it
 * keeps in that request's {@link ExchangeContext}, so a phase allocates nothing per request.
 * {@link PolicyStack} assembles them in order and says why each sits where it does.
 *
 * <p>Thread: every hook runs on the exchange's Worker loop. Hooks must not block.
 */
public interface Phase {

    /** Names the phase in /config and in errors. */
    String name();

    /**
     * The request's head is in and nothing was sent anywhere yet. Runs in stack order; the first error ends the
     * exchange with that answer, and only the phases already passed see {@link #onEnd}.
     *
     * @return null to go on, or the error to answer with at once
     */
    default ExchangeError onRequest(ExchangeContext x) {
        return null;
    }

    /**
     * One attempt at an endpoint ended: with an answer head ({@code status} > 0) or a failure ({@code failure}
     * non-null, status 0). Runs in stack order for every attempt, retried or not.
     *
     * @param unprocessed the answer or failure says nothing reached an app (safe to send elsewhere)
     * @return true to ask for another attempt (only the retry phase does); the exchange still checks that one is
     *         possible (no answer relayed yet)
     */
    default boolean onAttempt(ExchangeContext x, int status, boolean unprocessed, Throwable failure) {
        return false;
    }

    /** An attempt's head is about to go upstream: a phase may set the fields it passes on to the next hop. */
    default void onSend(ExchangeContext x) {}

    /** The answer's head is accepted and about to be relayed downstream (no more attempts). */
    default void onAnswer(ExchangeContext x, int status) {}

    /**
     * The exchange is over: answered, failed or abandoned. Runs in reverse stack order, once, for each phase whose
     * {@link #onRequest} ran; gives back what that took.
     *
     * @param error the mesh's own error when it answered with one, else null
     */
    default void onEnd(ExchangeContext x, ExchangeError error) {}
}
