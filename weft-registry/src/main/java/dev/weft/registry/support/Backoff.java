package dev.weft.registry.support;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: 100 ms, 200 ms, 400 ms ... capped at 5 s, each delay drawn from its upper half.
 * The jitter keeps a fleet of sidecars that lost the control plane at the same moment from reconnecting in
 * lockstep; keeping the lower half out keeps the delay growing. Shared by every registry backend, so all behave
 * alike in an outage.
 *
 * <p>Not thread safe; each user confines its instance to the registry's event thread.
 */
public final class Backoff {
    static final Duration INITIAL = Duration.ofMillis(100);
    static final Duration MAX = Duration.ofSeconds(5);

    private final long initialNanos;
    private final long maxNanos;
    private int attempts;

    public Backoff() {
        this(INITIAL, MAX);
    }

    public Backoff(Duration initial, Duration max) {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("invalid backoff " + initial + ".." + max
                    + " (expected 0 < initial <= max)");
        }
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** The delay before the next attempt; each call doubles the ceiling until the cap. */
    public Duration next() {
        long ceiling = attempts >= 62 ? maxNanos : Math.min(maxNanos, initialNanos << Math.min(attempts, 40));
        if (ceiling <= 0) {
            ceiling = maxNanos;
        }
        attempts++;
        long half = ceiling / 2;
        return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(half + 1));
    }

    public void reset() {
        attempts = 0;
    }

    public int attempts() {
        return attempts;
    }
}
