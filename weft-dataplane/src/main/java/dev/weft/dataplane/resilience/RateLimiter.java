package dev.weft.dataplane.resilience;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A token bucket in its GCRA form (the generic cell rate algorithm): one atomic "theoretical arrival time" instead
 * of a token count and a refill timer. A request is allowed when it arrives no earlier than TAT minus the burst
 * allowance; each allowed request pushes TAT one interval further. Lock free; any thread.
 */
public final class RateLimiter {
    private final long intervalNanos;
    private final long burstNanos;
    private final AtomicLong tat = new AtomicLong(System.nanoTime());

    /** @param perSecond sustained rate; @param burst requests allowed at once above it */
    public RateLimiter(double perSecond, int burst) {
        this.intervalNanos = Math.max(1, Math.round(1e9 / perSecond));
        this.burstNanos = intervalNanos * Math.max(1, burst);
    }

    /** @return 0 if allowed, otherwise the nanoseconds to wait before a retry can succeed (for Retry-After) */
    public long tryAcquire() {
        long now = System.nanoTime();
        while (true) {
            long t = tat.get();
            long base = Math.max(t, now);
            long allowAt = base - burstNanos;
            if (now < allowAt) {
                return allowAt - now + intervalNanos;
            }
            if (tat.compareAndSet(t, base + intervalNanos)) {
                return 0;
            }
        }
    }
}
