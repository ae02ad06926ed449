package dev.weft.dataplane.metrics;

import java.util.concurrent.atomic.LongAdder;

/**
 * A fixed-bucket latency histogram, recorded by every Worker without locks (one LongAdder per bucket) and rendered
 * as a Prometheus histogram in seconds. Fixed buckets, unlike an HdrHistogram, cost one increment per request and
 * aggregate across instances by plain addition, which is what {@code histogram_quantile} and {@code ./weft stat}
 * need.
 */
public final class LatencyHistogram {
    /** Upper bounds in microseconds: 100 µs to 10 s, dense where mesh hops and typical services answer. */
    public static final long[] BOUNDS_MICROS = {100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 75_000,
            100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000};
    /** The same bounds as Prometheus {@code le} label values (seconds). */
    public static final String[] LE = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
            "0.05", "0.075", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"};

    private final LongAdder[] buckets = new LongAdder[BOUNDS_MICROS.length + 1];
    private final LongAdder sumMicros = new LongAdder();

    public LatencyHistogram() {
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
    }

    public void record(long micros) {
        int i = 0;
        // A linear scan beats a binary search over 17 bounds, and most requests stop in the first few.
        while (i < BOUNDS_MICROS.length && micros > BOUNDS_MICROS[i]) {
            i++;
        }
        buckets[i].increment();
        sumMicros.add(Math.max(0, micros));
    }

    /** Counts per bucket (not cumulative); the last is above every bound. */
    public long[] counts() {
        long[] c = new long[buckets.length];
        for (int i = 0; i < c.length; i++) {
            c[i] = buckets[i].sum();
        }
        return c;
    }

    public long sumMicros() {
        return sumMicros.sum();
    }
}
