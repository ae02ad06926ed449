package dev.weft.registry.weft;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: 100 ms, 200 ms, 400 ms ... capped at 5 s, each delay drawn from its upper half.
 * The jitter keeps a fleet of sidecars that lost the control plane at the same moment from reconnecting in
 * lockstep; keeping the lower half out keeps the delay growing.
 *
 * <p>Not thread safe; each user confines its instance to the registry's event thread.
 */
final class Backoff {
    static final Duration INITIAL = Duration.ofMillis(100);
    static final Duration MAX = Duration.ofSeconds(5);

    private final long initialNanos;
    private final long maxNanos;
    private int attempts;

    Backoff() {
        this(INITIAL, MAX);
    }

    Backoff(Duration initial, Duration max) {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("invalid backoff " + initial + ".." + max
                    + " (expected 0 < initial <= max)");
        }
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** The delay before the next attempt; each call doubles the ceiling until the cap. */
    Duration next() {
        long ceiling = attempts >= 62 ? maxNanos : Math.min(maxNanos, initialNanos << Math.min(attempts, 40));
        if (ceiling <= 0) {
            ceiling = maxNanos;
        }
        attempts++;
        long half = ceiling / 2;
        return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(half + 1));
    }

    void reset() {
        attempts = 0;
    }

    int attempts() {
        return attempts;
    }
}
