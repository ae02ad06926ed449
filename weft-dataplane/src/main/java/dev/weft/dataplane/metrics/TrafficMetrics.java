package dev.weft.dataplane.metrics;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.util.concurrent.atomic.LongAdder;

/**
 * Request counts by status class and a latency histogram for one direction (inbound or outbound) of a sidecar.
 * Written by every Worker, so counters are LongAdders and the histogram is HdrHistogram's concurrent variant.
 */
public final class TrafficMetrics {
    private final String direction;
    private final LongAdder[] byClass = new LongAdder[6];
    private final LongAdder meshErrors = new LongAdder();
    private final LongAdder inFlight = new LongAdder();
    private final LongAdder bytesIn = new LongAdder();
    private final LongAdder bytesOut = new LongAdder();
    private final Histogram latencyMicros = new ConcurrentHistogram(3_600_000_000L, 2);

    public TrafficMetrics(String direction) {
        this.direction = direction;
        for (int i = 0; i < byClass.length; i++) {
            byClass[i] = new LongAdder();
        }
    }

    public String direction() {
        return direction;
    }

    public void started() {
        inFlight.increment();
    }

    /** @param meshError the sidecar itself produced the status (no capacity, peer unreachable...) */
    public void finished(int status, long startNanos, boolean meshError) {
        inFlight.decrement();
        byClass[Math.min(5, Math.max(0, status / 100))].increment();
        if (meshError) {
            meshErrors.increment();
        }
        long micros = (System.nanoTime() - startNanos) / 1000;
        latencyMicros.recordValue(Math.max(0, Math.min(micros, latencyMicros.getHighestTrackableValue())));
    }

    public void bytesIn(long n) {
        bytesIn.add(n);
    }

    public void bytesOut(long n) {
        bytesOut.add(n);
    }

    public long requests(int statusClass) {
        return byClass[statusClass].sum();
    }

    public long meshErrors() {
        return meshErrors.sum();
    }

    public long inFlight() {
        return inFlight.sum();
    }

    public long bytesIn() {
        return bytesIn.sum();
    }

    public long bytesOut() {
        return bytesOut.sum();
    }

    public Histogram latency() {
        return latencyMicros;
    }
}
