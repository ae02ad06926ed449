package dev.weft.dataplane.resilience;

import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.exchange.ExchangeContext;

import java.util.concurrent.TimeUnit;

/**
 * The service's local rate limits on what reaches its app ({@code rate-limit}, per route, and
 * {@code per-caller-rate} keyed by {@code x-weft-caller}): over them, 429 with Retry-After, and the app never sees
 * the request. The buckets live in the app's cluster, swapped with its policy ({@code Cluster#checkRate}).
 *
 * <p>Thread: the exchange's loop; stateless.
 */
public final class RateLimitPhase implements Phase {
    private final String localService;

    public RateLimitPhase(String localService) {
        this.localService = localService;
    }

    @Override
    public String name() {
        return "rate-limit";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        long wait = x.cluster().checkRate(x.head().get(Deadlines.CALLER_HEADER), x.policyRoute());
        if (wait == 0) {
            return null;
        }
        long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(wait + 999_999_999L));
        return new ExchangeError(429, "rate-limited", "rate limit of service '" + localService
                + "' exceeded; retry after " + seconds + " s", false, seconds);
    }
}
