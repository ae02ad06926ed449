package dev.weft.dataplane.resilience;

import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Failures;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.exchange.ExchangeContext;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.upstream.Upstream;

import java.util.function.BooleanSupplier;

/**
 * Retries on another endpoint, within the policy's attempts, the service's retry budget and the request's deadline.
 * What may be retried: an attempt that reached no app (the dial failed, the peer refused the stream, the connection
 * cap refused it, the peer's sidecar said {@code x-weft-unprocessed}) whatever its method; a reset or a 502/503/504
 * ({@code retry-on-5xx}) only for an idempotent method; and only when the body can be sent again whole. The rule
 * itself is {@link #allowed}, a pure function with a decision table beside it (RetryPhaseTest).
 *
 * <p>Thread: the exchange's loop; stateless (the budget lives in the cluster, swapped with its policy).
 */
public final class RetryPhase implements Phase {
    private final SidecarMetrics metrics;

    public RetryPhase(SidecarMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public String name() {
        return "retry";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        x.cluster().retryBudget().deposit(); // every request earns the budget a fraction of a retry
        return null;
    }

    @Override
    public boolean onAttempt(ExchangeContext x, int status, boolean unprocessed, Throwable failure) {
        boolean safe;
        if (failure == null) {
            boolean retriable5xx = (status == 502 || status == 503 || status == 504) && x.policy().retry().retryOn5xx();
            if (!unprocessed && !retriable5xx) {
                return false;
            }
            safe = unprocessed;
        } else if (failure instanceof Upstream.CircuitOpenException || failure instanceof Upstream.ConnectException) {
            safe = true; // nothing was sent: another endpoint may have connections to spare, or be up
        } else if (failure instanceof Failures.UpstreamReset r) {
            safe = r.refused;
        } else {
            return false; // our own limits, a timeout: another attempt would not help
        }
        boolean replayable = x.bodyReplayable() && (x.requestComplete() || x.sentNanos() == 0);
        boolean beforeDeadline = x.deadline() == 0 || System.nanoTime() < x.deadline();
        boolean retry = x.canRetryNow() && allowed(x.head().idempotent(), safe, replayable,
                x.attempts() < x.policy().retry().attempts(), beforeDeadline, x.cluster().retryBudget()::tryWithdraw);
        if (retry) {
            x.cluster().countRetry();
            if (failure instanceof Upstream.ConnectException) {
                // This is what keeps a killed instance from failing requests until its lease expires.
                metrics.connectRetries.increment();
            }
        }
        return retry;
    }

    /**
     * The retry rule. The budget is asked last, so that a retry refused for another reason costs it nothing.
     *
     * @param idempotent     the method may be sent twice without a second effect
     * @param unprocessed    nothing of the request reached an app
     * @param replayableBody the body can be sent again whole (none, kept, or not yet sent)
     * @param attemptsLeft   the policy's attempts are not used up
     * @param beforeDeadline the request's deadline has not passed
     * @param budget         withdraws one retry from the service's budget; false when it is empty
     */
    public static boolean allowed(boolean idempotent, boolean unprocessed, boolean replayableBody, boolean attemptsLeft,
                                  boolean beforeDeadline, BooleanSupplier budget) {
        return (idempotent || unprocessed) && replayableBody && attemptsLeft && beforeDeadline && budget.getAsBoolean();
    }
}
