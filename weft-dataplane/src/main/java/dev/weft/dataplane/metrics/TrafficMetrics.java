package dev.weft.dataplane.metrics;

import org.HdrHistogram.Histogram;

/**
 * Request counts by status class and a latency histogram for one direction (inbound or outbound) of a sidecar.
 * Written by every Worker, always (also with {@code --metrics off}): each writes a cell of its own ({@link PerThread}:
 * plain counters and a plain HdrHistogram), and the readers merge the cells. (This was LongAdders and HdrHistogram's
 * ConcurrentHistogram, whose every record is four atomic operations on memory every Worker writes.)
 *
 * <p>Threads: {@link #started}, {@link #finished}, {@link #bytesIn}, {@link #bytesOut} on any Worker; the readers on
 * an admin request's Worker. A read while Workers write may see a request in one counter and not yet in another;
 * Prometheus tolerates that.
 */
public final class TrafficMetrics {
    private static final long HIGHEST_MICROS = 3_600_000_000L;
    private static final int DIGITS = 2;
    // Counters of a cell: requests by status class 0-5, then these.
    private static final int MESH_ERRORS = 6;
    private static final int IN_FLIGHT = 7;
    private static final int BYTES_IN = 8;
    private static final int BYTES_OUT = 9;
    private static final int COUNTERS = 10;

    private final String direction;
    private final PerThread<Cell> cells = new PerThread<>(Cell::new);

    /** One thread's share. */
    private static final class Cell {
        final long[] counts = new long[COUNTERS];
        final Histogram latencyMicros = new Histogram(HIGHEST_MICROS, DIGITS);
    }

    public TrafficMetrics(String direction) {
        this.direction = direction;
    }

    public String direction() {
        return direction;
    }

    public void started() {
        add(IN_FLIGHT, 1);
    }

    /**
     * @param startNanos, endNanos when the request arrived and when it ended ({@code System.nanoTime()})
     * @param meshError the sidecar itself produced the status (no capacity, peer unreachable...)
     */
    public void finished(int status, long startNanos, long endNanos, boolean meshError) {
        long micros = Math.max(0, Math.min((endNanos - startNanos) / 1000, HIGHEST_MICROS));
        Cell c = cells.get();
        if (cells.isShared(c)) {
            synchronized (c) {
                finished(c, status, meshError, micros);
            }
        } else {
            finished(c, status, meshError, micros);
        }
    }

    private static void finished(Cell c, int status, boolean meshError, long micros) {
        PerThread.add(c.counts, IN_FLIGHT, -1);
        PerThread.add(c.counts, Math.min(5, Math.max(0, status / 100)), 1);
        if (meshError) {
            PerThread.add(c.counts, MESH_ERRORS, 1);
        }
        c.latencyMicros.recordValue(micros);
    }

    public void bytesIn(long n) {
        add(BYTES_IN, n);
    }

    public void bytesOut(long n) {
        add(BYTES_OUT, n);
    }

    private void add(int counter, long n) {
        Cell c = cells.get();
        if (cells.isShared(c)) {
            synchronized (c) {
                PerThread.add(c.counts, counter, n);
            }
        } else {
            PerThread.add(c.counts, counter, n);
        }
    }

    private long sum(int counter) {
        return cells.sum(c -> PerThread.read(c.counts, counter));
    }

    public long requests(int statusClass) {
        return sum(statusClass);
    }

    public long meshErrors() {
        return sum(MESH_ERRORS);
    }

    public long inFlight() {
        return sum(IN_FLIGHT);
    }

    public long bytesIn() {
        return sum(BYTES_IN);
    }

    public long bytesOut() {
        return sum(BYTES_OUT);
    }

    /**
     * The latency histogram (µs) of every Worker, merged into a new one: a snapshot, not a live view. A cell being
     * written while it is copied may give a count or two that its total does not show yet.
     */
    public Histogram latency() {
        Histogram merged = new Histogram(HIGHEST_MICROS, DIGITS);
        cells.forEach(c -> {
            if (cells.isShared(c)) {
                synchronized (c) {
                    merged.add(c.latencyMicros);
                }
            } else {
                merged.add(c.latencyMicros);
            }
        });
        return merged;
    }
}
