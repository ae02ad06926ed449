package dev.weft.dataplane.balancing;

import dev.weft.dataplane.resilience.RateLimiter;
import dev.weft.dataplane.resilience.RetryBudget;
import dev.weft.dataplane.resilience.ServicePolicy;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link Cluster}'s policy with the state it needs (retry budget, rate limiters): swapped as one, so a policy
 * change is atomic. Immutable; the budget and limiters inside are thread safe and shared by every Worker.
 */
record ClusterProtection(ServicePolicy policy, RetryBudget budget, RateLimiter limiter,
                         Map<ServicePolicy.Route, RateLimiter> routeLimiters, Map<String, RateLimiter> perCaller) {
    ClusterProtection(ServicePolicy p) {
        this(p, new RetryBudget(p.retry().budgetRatio(), p.retry().minPerSecond()), limiter(p), routeLimiters(p),
                new ConcurrentHashMap<>());
    }

    /**
     * Local rate limiting: the service's {@code rate-limit}, the route's, then {@code per-caller-rate} keyed by the
     * calling service. Any thread.
     *
     * @return 0 when admitted, else nanoseconds until a request could pass
     */
    long checkRate(String caller, ServicePolicy.Route route) {
        long wait = limiter == null ? 0 : limiter.tryAcquire();
        if (wait == 0 && route != null) {
            RateLimiter rl = routeLimiters.get(route);
            wait = rl == null ? 0 : rl.tryAcquire();
        }
        if (wait == 0 && policy.perCallerRate() > 0 && caller != null) {
            // Bounded: at most 1024 distinct callers are tracked; beyond that unknown callers share one bucket.
            String key = perCaller.size() < 1024 || perCaller.containsKey(caller) ? caller : "(other)";
            double rate = policy.perCallerRate();
            wait = perCaller.computeIfAbsent(key, k -> new RateLimiter(rate, policy.burstFor(rate))).tryAcquire();
        }
        return wait;
    }

    private static RateLimiter limiter(ServicePolicy p) {
        return p.rateLimit() > 0 ? new RateLimiter(p.rateLimit(), p.burstFor(p.rateLimit())) : null;
    }

    private static Map<ServicePolicy.Route, RateLimiter> routeLimiters(ServicePolicy p) {
        Map<ServicePolicy.Route, RateLimiter> m = new IdentityHashMap<>();
        for (ServicePolicy.Route r : p.routes()) {
            RateLimiter l = limiter(r.policy());
            if (l != null) {
                m.put(r, l);
            }
        }
        return m;
    }
}
