package dev.weft.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters every connection of a run writes into. Thread-safe: written by all event loops at once, read by the
 * generator's main thread. Only outcomes seen while {@link #measuring} count toward the result; the progress
 * counters see every outcome, warm-up included, so the progress line is never silent.
 */
final class LoadStats {
    /** Latencies above a minute are clamped: they are failures in any benchmark that matters here. */
    static final long MAX_MICROS = 60_000_000L;

    private final Recorder latency = new Recorder(MAX_MICROS, 3);
    private final LongAdder successes = new LongAdder();
    private final ConcurrentHashMap<Integer, LongAdder> byStatus = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> byOrigin = new ConcurrentHashMap<>();
    private final LongAdder wrongBody = new LongAdder();
    private final LongAdder connection = new LongAdder();
    private final LongAdder timeout = new LongAdder();
    /** Every success's latency, warm-up included, read and reset once a second for {@link LoadGenerator.Tick}. */
    final Recorder progressLatency = new Recorder(MAX_MICROS, 2);
    final LongAdder progressSuccesses = new LongAdder();
    final LongAdder progressErrors = new LongAdder();
    /**
     * The progress line's errors by kind, since it last printed: so that errors during the warm-up, which count
     * toward no result, still say what they were (a failure only costs a map lookup; success paths never touch it).
     */
    private final ConcurrentHashMap<String, LongAdder> progressKinds = new ConcurrentHashMap<>();
    volatile boolean measuring;

    void success(long micros) {
        progressSuccesses.increment();
        progressLatency.recordValue(Math.min(Math.max(micros, 0), MAX_MICROS));
        if (measuring) {
            successes.increment();
            latency.recordValue(Math.min(Math.max(micros, 0), MAX_MICROS));
        }
    }

    /** @param origin who answered, e.g. {@code mesh no-capacity} or {@code provider small} */
    void badStatus(int status, String origin) {
        progressError(status + " " + origin);
        if (measuring) {
            byStatus.computeIfAbsent(status, s -> new LongAdder()).increment();
            byOrigin.computeIfAbsent(status + " " + origin, s -> new LongAdder()).increment();
        }
    }

    void wrongBody() {
        progressError("wrong body");
        if (measuring) {
            wrongBody.increment();
        }
    }

    void connectionError() {
        progressError("connection");
        if (measuring) {
            connection.increment();
        }
    }

    void timeout() {
        progressError("timeout");
        if (measuring) {
            timeout.increment();
        }
    }

    private void progressError(String kind) {
        progressErrors.increment();
        progressKinds.computeIfAbsent(kind, k -> new LongAdder()).increment();
    }

    /** The errors since the previous call, by kind ({@code 503 mesh no-capacity: 30, connection: 2}); "" if none. */
    String takeProgressKinds() {
        if (progressKinds.isEmpty()) {
            return "";
        }
        TreeMap<String, Long> kinds = new TreeMap<>();
        for (String k : progressKinds.keySet()) {
            LongAdder a = progressKinds.remove(k);
            if (a != null && a.sum() > 0) {
                kinds.merge(k, a.sum(), Long::sum);
            }
        }
        StringBuilder out = new StringBuilder();
        kinds.forEach((k, n) -> out.append(out.isEmpty() ? "" : ", ").append(k).append(": ").append(n));
        return out.toString();
    }

    long successes() {
        return successes.sum();
    }

    /** Everything recorded since the measurement began; call only after every writer has stopped. */
    Histogram latencyHistogram() {
        return latency.getIntervalHistogram();
    }

    ErrorCounts errors() {
        TreeMap<Integer, Long> statuses = new TreeMap<>();
        byStatus.forEach((status, count) -> statuses.put(status, count.sum()));
        TreeMap<String, Long> origins = new TreeMap<>();
        byOrigin.forEach((origin, count) -> origins.put(origin, count.sum()));
        return new ErrorCounts(statuses, origins, wrongBody.sum(), connection.sum(), timeout.sum());
    }

    long measuredErrors() {
        return errors().total();
    }
}
