package dev.weft.control.trace;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The control plane's bounded, in-memory trace store, so that traces can be looked at with nothing else installed.
 *
 * <p>Bounded by span count ({@code maxSpans}); a trace holds at most {@link #MAX_SPANS_PER_TRACE}. When full, the
 * trace that arrived first is evicted, except that failed traces and slow ones (at or above the 99th percentile of
 * the traces evicted so far) are moved to a protected area of a fifth of the capacity, itself evicted oldest first.
 * Under heavy traffic recent traces turn over in seconds, and the protected area is what keeps the traces
 * {@code ./weft trace} is for (the slow and the failed) around for minutes.
 *
 * <p>Not thread safe: the control plane confines it to its single "weft-control-spans" thread.
 */
public final class SpanStore {
    public static final int MAX_SPANS_PER_TRACE = 1_000;

    private final int maxSpans;
    private final int maxProtectedSpans;
    /** Arrival order of each trace's first span. */
    private final LinkedHashMap<String, Trace> recent = new LinkedHashMap<>();
    private final LinkedHashMap<String, Trace> protectedTraces = new LinkedHashMap<>();
    private int recentSpans;
    private int protectedSpans;
    private final DurationHistogram evictedDurations = new DurationHistogram();
    private long accepted;
    private long droppedOverTraceLimit;
    private long evictedTraces;

    /** One trace's spans and what queries filter on. */
    public static final class Trace {
        final String id;
        final List<StoredSpan> spans = new ArrayList<>(4);
        long start = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        boolean error;

        Trace(String id) {
            this.id = id;
        }

        void add(StoredSpan s) {
            spans.add(s);
            if (s.timestamp() > 0) {
                start = Math.min(start, s.timestamp());
                end = Math.max(end, s.end());
            }
            error |= s.error();
        }

        public String id() {
            return id;
        }

        public List<StoredSpan> spans() {
            return spans;
        }

        /** Epoch microseconds of the earliest span, or 0 when no span has a timestamp. */
        public long start() {
            return start == Long.MAX_VALUE ? 0 : start;
        }

        public long duration() {
            return start == Long.MAX_VALUE ? 0 : end - start;
        }

        public boolean hasError() {
            return error;
        }
    }

    public SpanStore(int maxSpans) {
        if (maxSpans < 1) {
            throw new IllegalArgumentException("span store capacity must be >= 1, got " + maxSpans);
        }
        this.maxSpans = maxSpans;
        this.maxProtectedSpans = Math.max(1, maxSpans / 5);
    }

    public void add(List<StoredSpan> spans) {
        for (StoredSpan s : spans) {
            Trace t = protectedTraces.get(s.traceId());
            boolean isProtected = t != null;
            if (t == null) {
                t = recent.get(s.traceId());
            }
            if (t == null) {
                t = new Trace(s.traceId());
                recent.put(t.id, t);
            }
            if (t.spans.size() >= MAX_SPANS_PER_TRACE) {
                droppedOverTraceLimit++;
                continue;
            }
            t.add(s);
            accepted++;
            if (isProtected) {
                protectedSpans++;
            } else {
                recentSpans++;
            }
        }
        evict();
    }

    private void evict() {
        while (recentSpans + protectedSpans > maxSpans && !recent.isEmpty()) {
            Iterator<Trace> oldest = recent.values().iterator();
            Trace t = oldest.next();
            oldest.remove();
            recentSpans -= t.spans.size();
            long threshold = evictedDurations.percentile(0.99);
            evictedDurations.record(t.duration());
            if ((t.error || (threshold > 0 && t.duration() >= threshold)) && t.spans.size() <= maxProtectedSpans) {
                protectedTraces.put(t.id, t);
                protectedSpans += t.spans.size();
                while (protectedSpans > maxProtectedSpans) {
                    Iterator<Trace> p = protectedTraces.values().iterator();
                    Trace gone = p.next();
                    p.remove();
                    protectedSpans -= gone.spans.size();
                    evictedTraces++;
                }
            } else {
                evictedTraces++;
            }
        }
        while (recentSpans + protectedSpans > maxSpans && !protectedTraces.isEmpty()) {
            Iterator<Trace> p = protectedTraces.values().iterator();
            Trace gone = p.next();
            p.remove();
            protectedSpans -= gone.spans.size();
            evictedTraces++;
        }
    }

    public Trace trace(String traceId) {
        Trace t = recent.get(traceId);
        return t != null ? t : protectedTraces.get(traceId);
    }

    /** Every trace kept, in no particular order. */
    public List<Trace> traces() {
        List<Trace> all = new ArrayList<>(recent.size() + protectedTraces.size());
        all.addAll(protectedTraces.values());
        all.addAll(recent.values());
        return all;
    }

    /** Traces with a span matching {@code spanFilter} whose start is in [from, to], newest first, at most limit. */
    public List<Trace> query(Predicate<StoredSpan> spanFilter, long fromMicros, long toMicros, int limit) {
        TreeSet<Trace> newest = new TreeSet<>(Comparator.comparingLong(Trace::start).reversed()
                .thenComparing(Trace::id));
        for (Collection<Trace> c : List.of(recent.values(), protectedTraces.values())) {
            for (Trace t : c) {
                long start = t.start();
                if (start < fromMicros || start > toMicros) {
                    continue;
                }
                boolean match = false;
                for (StoredSpan s : t.spans) {
                    if (spanFilter.test(s)) {
                        match = true;
                        break;
                    }
                }
                if (!match) {
                    continue;
                }
                newest.add(t);
                if (newest.size() > limit) {
                    newest.pollLast();
                }
            }
        }
        return new ArrayList<>(newest);
    }

    /** Local service names, sorted. */
    public List<String> services() {
        TreeMap<String, Boolean> names = new TreeMap<>();
        for (Trace t : traces()) {
            for (StoredSpan s : t.spans) {
                if (s.localService() != null) {
                    names.put(s.localService(), true);
                }
            }
        }
        return new ArrayList<>(names.keySet());
    }

    /** Span names recorded by a service, sorted. */
    public List<String> spanNames(String service, boolean remote) {
        TreeMap<String, Boolean> names = new TreeMap<>();
        for (Trace t : traces()) {
            for (StoredSpan s : t.spans) {
                if (service.equals(s.localService())) {
                    String n = remote ? s.remoteService() : s.name();
                    if (n != null) {
                        names.put(n, true);
                    }
                }
            }
        }
        return new ArrayList<>(names.keySet());
    }

    /** A caller → callee link, from client spans that name their remote service. */
    public record Link(String parent, String child, long callCount, long errorCount) {}

    public List<Link> dependencies(long fromMicros, long toMicros) {
        Map<String, long[]> counts = new HashMap<>();
        for (Trace t : traces()) {
            for (StoredSpan s : t.spans) {
                if ("CLIENT".equals(s.kind()) && s.localService() != null && s.remoteService() != null
                        && s.timestamp() >= fromMicros && s.timestamp() <= toMicros) {
                    long[] c = counts.computeIfAbsent(s.localService() + "\u0000" + s.remoteService(), k -> new long[2]);
                    c[0]++;
                    if (s.error()) {
                        c[1]++;
                    }
                }
            }
        }
        List<Link> links = new ArrayList<>();
        new TreeMap<>(counts).forEach((k, c) -> {
            String[] pc = k.split("\u0000", 2);
            links.add(new Link(pc[0], pc[1], c[0], c[1]));
        });
        return links;
    }

    public int spanCount() {
        return recentSpans + protectedSpans;
    }

    public int traceCount() {
        return recent.size() + protectedTraces.size();
    }

    public int protectedTraceCount() {
        return protectedTraces.size();
    }

    public int capacity() {
        return maxSpans;
    }

    public long accepted() {
        return accepted;
    }

    public long evictedTraces() {
        return evictedTraces;
    }

    public long droppedOverTraceLimit() {
        return droppedOverTraceLimit;
    }

    /** Log2-bucketed durations (µs): enough to place a 99th percentile within a factor of two. */
    static final class DurationHistogram {
        private final long[] buckets = new long[64];
        private long count;

        void record(long micros) {
            buckets[63 - Long.numberOfLeadingZeros(Math.max(1, micros))]++;
            count++;
            if (count >= 1_000_000) {
                // Halving keeps the estimate following recent traffic rather than all history.
                count = 0;
                for (int i = 0; i < buckets.length; i++) {
                    buckets[i] /= 2;
                    count += buckets[i];
                }
            }
        }

        /**
         * The upper bound of the bucket holding quantile q, so only traces beyond it count as slow (with a lower
         * bound, a service whose traces all take 50 ms would call every one of them slow); 0 until 100 traces.
         */
        long percentile(double q) {
            if (count < 100) {
                return 0;
            }
            long rank = (long) Math.ceil(q * count);
            long seen = 0;
            for (int i = 0; i < buckets.length; i++) {
                seen += buckets[i];
                if (seen >= rank) {
                    return i >= 62 ? Long.MAX_VALUE : 1L << (i + 1);
                }
            }
            return Long.MAX_VALUE;
        }
    }
}
