package dev.weft.dataplane.observe;

import java.time.Instant;

/**
 * Turns System.nanoTime() into epoch microseconds for span timestamps without a wall-clock read per request: an
 * offset measured once and refreshed every second by {@link #calibrate} (so a stepped wall clock is followed).
 */
final class EpochClock {
    private volatile long offsetMicros;

    EpochClock() {
        calibrate();
    }

    void calibrate() {
        Instant now = Instant.now();
        long nanos = System.nanoTime();
        offsetMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000 - nanos / 1000;
    }

    long epochMicros(long nanoTime) {
        return offsetMicros + nanoTime / 1000;
    }
}
