package dev.weft.control.history;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The mesh-wide aggregates of the last hour, for the dashboard's charts: a fixed ring of {@link #capacity} ticks
 * (720 at the default 5 s: one hour) shared by every series, and per series (a service, an edge caller → callee, an
 * endpoint) one {@code float[]} holding {@link #METRICS} values per tick. No object per point: a series costs
 * {@code METRICS × capacity × 4} bytes (23,040 at 720 ticks) plus its key, whatever the traffic.
 *
 * <p>Bounded: at most {@link #maxSeries} series; a new one beyond that is not kept (counted in
 * {@link #droppedSeries}). A series not seen for a whole ring is removed, so sidecars that left free their space.
 *
 * <p>Threads: written by the history thread ({@link HistoryScraper}), read by the control plane's event loops for the
 * API; every method is synchronized (an append touches each series once, a read copies at most one series).
 */
public final class History {
    /** The values kept per tick, in this order in each series' array (NaN: no data). */
    public static final List<String> METRIC_NAMES = List.of("rate", "success", "p50", "p90", "p99", "inFlight",
            "cpuMicrosPerRequest", "heapBytesPerRequest");
    public static final int METRICS = METRIC_NAMES.size();
    public static final int DEFAULT_CAPACITY = 720;
    public static final int DEFAULT_MAX_SERIES = 4096;

    /** What a series describes; its key is the kind's prefix plus the name. */
    public enum Kind {
        SERVICE("s:"), EDGE("e:"), ENDPOINT("n:");

        final String prefix;

        Kind(String prefix) {
            this.prefix = prefix;
        }
    }

    /** One series' values: {@code values[metric * capacity + slot]}. */
    private static final class Series {
        final float[] values;
        long lastTick;

        Series(int capacity) {
            values = new float[METRICS * capacity];
            Arrays.fill(values, Float.NaN);
        }
    }

    /** A series read back in time order: {@code values[metric][i]} at {@code times[i]} (epoch milliseconds). */
    public record Points(long[] times, float[][] values) {}

    private final int capacity;
    private final int maxSeries;
    private final long[] times;
    private final Map<String, Series> series = new HashMap<>();
    /** Ticks appended so far; the next tick goes to slot {@code ticks % capacity}. */
    private long ticks;
    private long droppedSeries;
    private long writing = -1;

    public History() {
        this(DEFAULT_CAPACITY, DEFAULT_MAX_SERIES);
    }

    public History(int capacity, int maxSeries) {
        if (capacity < 2 || maxSeries < 1) {
            throw new IllegalArgumentException("history needs capacity >= 2 and maxSeries >= 1, got " + capacity
                    + " and " + maxSeries);
        }
        this.capacity = capacity;
        this.maxSeries = maxSeries;
        this.times = new long[capacity];
    }

    public int capacity() {
        return capacity;
    }

    public int maxSeries() {
        return maxSeries;
    }

    /**
     * Starts a tick at {@code epochMillis}: every series gets NaN in the new slot until {@link #put} fills it, so a
     * series missing from a tick shows a gap rather than its value of an hour ago. Series unseen for a whole ring go.
     */
    public synchronized void beginTick(long epochMillis) {
        int slot = (int) (ticks % capacity);
        times[slot] = epochMillis;
        writing = ticks;
        for (Iterator<Series> it = series.values().iterator(); it.hasNext(); ) {
            Series s = it.next();
            if (ticks - s.lastTick >= capacity) {
                it.remove();
                continue;
            }
            for (int m = 0; m < METRICS; m++) {
                s.values[m * capacity + slot] = Float.NaN;
            }
        }
        ticks++;
    }

    /** Sets the current tick's values of one series ({@code values.length == METRICS}, NaN for unknown). */
    public synchronized void put(Kind kind, String name, double[] values) {
        if (writing < 0) {
            throw new IllegalStateException("put before beginTick");
        }
        String key = kind.prefix + name;
        Series s = series.get(key);
        if (s == null) {
            if (series.size() >= maxSeries) {
                droppedSeries++;
                return;
            }
            s = new Series(capacity);
            series.put(key, s);
        }
        s.lastTick = writing;
        int slot = (int) (writing % capacity);
        for (int m = 0; m < METRICS; m++) {
            s.values[m * capacity + slot] = (float) values[m];
        }
    }

    /** The series' points from {@code sinceMillis} on, oldest first; null when the series is unknown. */
    public synchronized Points read(Kind kind, String name, long sinceMillis) {
        Series s = series.get(kind.prefix + name);
        if (s == null) {
            return null;
        }
        int n = (int) Math.min(ticks, capacity);
        long first = ticks - n;
        List<Integer> slots = new ArrayList<>(n);
        for (long t = first; t < ticks; t++) {
            int slot = (int) (t % capacity);
            if (times[slot] >= sinceMillis) {
                slots.add(slot);
            }
        }
        long[] at = new long[slots.size()];
        float[][] values = new float[METRICS][slots.size()];
        for (int i = 0; i < slots.size(); i++) {
            int slot = slots.get(i);
            at[i] = times[slot];
            for (int m = 0; m < METRICS; m++) {
                values[m][i] = s.values[m * capacity + slot];
            }
        }
        return new Points(at, values);
    }

    public synchronized int seriesCount() {
        return series.size();
    }

    public synchronized long ticks() {
        return ticks;
    }

    public synchronized long droppedSeries() {
        return droppedSeries;
    }

    /** The bytes the ring's arrays hold now: the shared times plus each series' values (keys and map not counted). */
    public synchronized long arrayBytes() {
        return (long) times.length * Long.BYTES + (long) series.size() * METRICS * capacity * Float.BYTES;
    }
}
