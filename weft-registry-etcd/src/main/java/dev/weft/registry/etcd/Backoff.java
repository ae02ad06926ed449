package dev.weft.registry.etcd;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: 100 ms, 200 ms, 400 ms ... capped at 5 s, each delay drawn from its upper half,
 * the same schedule as the {@code weft://} client so both backends behave alike in an outage. The jitter keeps a
 * fleet of sidecars that lost etcd at the same moment from coming back in lockstep.
 *
 * <p>Not thread safe; each user confines its instance to the registry's event thread.
 */
final class Backoff {
    static final Duration INITIAL = Duration.ofMillis(100);
    static final Duration MAX = Duration.ofSeconds(5);

    private int attempts;

    /** The delay before the next attempt; each call doubles the ceiling until the cap. */
    Duration next() {
        long ceiling = Math.min(MAX.toNanos(), INITIAL.toNanos() << Math.min(attempts, 16));
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
