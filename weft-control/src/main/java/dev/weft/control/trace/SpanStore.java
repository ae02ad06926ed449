package dev.weft.control.trace;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The control plane's bounded, in-memory trace store, so that traces can be looked at with nothing else installed.
 *
 * <p>Bounded by span count ({@code maxSpans}); a trace holds at most {@link #MAX_SPANS_PER_TRACE}. When full, the
 * trace that arrived first is evicted, except that failed traces and slow ones (at or above the 99th percentile of
 * the traces evicted so far) are moved to a protected area of a fifth of the capacity, itself evicted oldest first.
 * Under heavy traffic recent traces turn over in seconds, and the protected area is what keeps the traces
 * {@code ./weft trace} is for (the slow and the failed) around for minutes.
 *
 * <p>No object per span: each area is a {@link SpanLog} (span bytes in a ring of large reused byte arrays, fields in
 * parallel primitive arrays), names are ids into one {@link NameTable}, and a batch is parsed into reused arrays
 * ({@link SpanBatch}). At tens of thousands of spans a second, spans that were objects lived just long enough to be
 * promoted and then died in the old generation: most of the store's CPU was garbage collection. Moving a trace to
 * the protected area copies it, which is rare. Queries, rare too, build their answers as they go.
 *
 * <p>Not thread safe: the control plane confines it to its single "weft-control-spans" thread.
 */
public final class SpanStore {
    public static final int MAX_SPANS_PER_TRACE = 1_000;
    /**
     * Log bytes per span of capacity: a sidecar's spans are 700-900 bytes. Larger spans on average make the store
     * keep fewer than its capacity in spans (the oldest go first, as ever).
     */
    static final int BYTES_PER_SPAN = 1024;

    private final int maxSpans;
    private final int maxProtectedSpans;
    private final NameTable names = new NameTable();
    private final SpanLog recent;
    private final SpanLog protectedTraces;
    private final SpanBatch batch = new SpanBatch();
    private final byte[] scratch = new byte[64 * 1024];
    private final DurationHistogram evictedDurations = new DurationHistogram();
    private long accepted;
    private long droppedOverTraceLimit;
    private long droppedTooLarge;
    private long evictedTraces;

    /** One trace as a query answers it: a copy, so it stays valid after the store moves on. */
    public record Trace(String id, long start, long duration, boolean hasError, List<byte[]> spans) {}

    /** What a query asks of a trace's spans: one span must match every part given (null: any). */
    public record Filter(String service, String spanName, String remoteService, long minDuration, long maxDuration,
                         boolean errorsOnly) {
        public static final Filter ANY = new Filter(null, null, null, 0, Long.MAX_VALUE, false);
    }

    public SpanStore(int maxSpans) {
        if (maxSpans < 1) {
            throw new IllegalArgumentException("span store capacity must be >= 1, got " + maxSpans);
        }
        this.maxSpans = maxSpans;
        this.maxProtectedSpans = Math.max(1, maxSpans / 5);
        this.recent = new SpanLog(maxSpans, BYTES_PER_SPAN, names);
        this.protectedTraces = new SpanLog(maxProtectedSpans, BYTES_PER_SPAN, names);
    }

    /**
     * Parses and stores one posted batch (a JSON array of Zipkin v2 spans), unchecked: a malformed batch is refused
     * whole.
     *
     * @throws IllegalArgumentException naming what was wrong, for a 400 answer
     */
    public void add(byte[] body) {
        add(body, null);
    }

    /**
     * Parses one posted batch and stores the spans {@code sender} may post: those whose own service (the
     * {@code localEndpoint.serviceName}, lower-cased as the store keeps every service name) is the sender's. A
     * malformed batch is refused whole.
     *
     * <p>The check costs an int comparison per span: the sender's name is looked up once per batch in the
     * {@link NameTable} the parser already put each span's service into (after parsing, so it is there whenever a
     * span of the batch names it), and each span's service is already that table's id.
     *
     * @param sender the service whose sidecar proved itself for this post, or null to store every span (the operator,
     *               or a post from loopback, which is not checked: docs/security.md)
     * @return how many spans were not stored because they name another service than {@code sender} (or none)
     * @throws IllegalArgumentException naming what was wrong, for a 400 answer
     */
    public int add(byte[] body, String sender) {
        batch.parse(body, names);
        try {
            if (sender == null) {
                for (int i = 0; i < batch.size; i++) {
                    add(i);
                }
                return 0;
            }
            // -1 when no span of the batch (nor any stored) names the sender: then every span names another service,
            // a span without a service included (its local id is -1 too, hence the separate test).
            int own = names.find(sender.toLowerCase(Locale.ROOT));
            int refused = 0;
            for (int i = 0; i < batch.size; i++) {
                if (own >= 0 && batch.local[i] == own) {
                    add(i);
                } else {
                    refused++;
                }
            }
            return refused;
        } finally {
            batch.release();
        }
    }

    private void add(int i) {
        SpanBatch b = batch;
        long hi = b.traceHi[i];
        long lo = b.traceLo[i];
        int length = b.length[i];
        if (!recent.couldHold(1, length)) {
            droppedTooLarge++;
            return;
        }
        // Each lookup is a few cache misses into arrays of the store's size, a good part of a span's cost: the
        // trace is looked up once, and again only after an eviction (which may remove or protect this very trace).
        int inProtected = protectedTraces.find(hi, lo);
        int inRecent = inProtected >= 0 ? -1 : recent.find(hi, lo);
        int spans = inProtected >= 0 ? protectedTraces.traceSpans(inProtected)
                : inRecent >= 0 ? recent.traceSpans(inRecent) : 0;
        if (spans >= MAX_SPANS_PER_TRACE) {
            droppedOverTraceLimit++;
            return;
        }
        SpanLog area = inProtected >= 0 ? protectedTraces : recent;
        while (recent.spans() + protectedTraces.spans() >= maxSpans || !area.hasRoomFor(1, length)) {
            if (area == protectedTraces && !protectedTraces.hasRoomFor(1, length)) {
                dropOldestProtected();
            } else if (recent.oldest() >= 0) {
                evictOldestRecent();
            } else {
                dropOldestProtected();
            }
            inProtected = protectedTraces.find(hi, lo);
            inRecent = inProtected >= 0 ? -1 : recent.find(hi, lo);
            area = inProtected >= 0 ? protectedTraces : recent;
        }
        area.append(area == protectedTraces ? inProtected : inRecent, hi, lo, b.wide[i], b.body, b.start[i], length,
                b.timestamp[i], b.duration[i], b.id[i], b.parentId[i], b.name[i], b.kind[i], b.local[i], b.remote[i],
                b.error[i]);
        accepted++;
    }

    private void evictOldestRecent() {
        int t = recent.oldest();
        long duration = recent.traceDuration(t);
        long threshold = evictedDurations.percentile(0.99);
        evictedDurations.record(duration);
        int count = recent.traceSpans(t);
        boolean interesting = recent.traceError(t) || (threshold > 0 && duration >= threshold);
        if (interesting && count <= maxProtectedSpans) {
            long bytes = recent.traceBytes(t);
            if (protectedTraces.couldHold(count, bytes)) {
                while (!protectedTraces.hasRoomFor(count, bytes)) {
                    dropOldestProtected();
                }
                protectedTraces.copy(recent, t, scratch);
                recent.remove(t);
                return;
            }
        }
        recent.remove(t);
        evictedTraces++;
    }

    private void dropOldestProtected() {
        protectedTraces.remove(protectedTraces.oldest());
        evictedTraces++;
    }

    /** The trace with this id (16 or 32 hex digits), or null. */
    public Trace trace(String traceId) {
        long[] id = parseId(traceId);
        if (id == null) {
            return null;
        }
        int t = protectedTraces.find(id[0], id[1]);
        if (t >= 0) {
            return snapshot(protectedTraces, t);
        }
        t = recent.find(id[0], id[1]);
        return t >= 0 ? snapshot(recent, t) : null;
    }

    private static Trace snapshot(SpanLog area, int t) {
        List<byte[]> spans = new ArrayList<>(area.traceSpans(t));
        for (int s = area.firstSlot(t); s >= 0; s = area.nextSlot(s)) {
            spans.add(area.json(s));
        }
        return new Trace(area.traceId(t), area.traceStart(t), area.traceDuration(t), area.traceError(t), spans);
    }

    /** Traces with a span matching {@code filter} whose start is in [from, to], newest first, at most limit. */
    public List<Trace> query(Filter filter, long fromMicros, long toMicros, int limit) {
        int service = nameId(filter.service());
        int remote = nameId(filter.remoteService());
        if (service == -2 || remote == -2) {
            return List.of(); // a name no stored span has
        }
        record Found(SpanLog area, int trace, long start, String id) {}
        TreeSet<Found> newest = new TreeSet<>(Comparator.comparingLong(Found::start).reversed()
                .thenComparing(Found::id));
        for (SpanLog area : List.of(recent, protectedTraces)) {
            area.forEachTrace(t -> {
                long start = area.traceStart(t);
                if (start < fromMicros || start > toMicros) {
                    return;
                }
                for (int s = area.firstSlot(t); s >= 0; s = area.nextSlot(s)) {
                    if ((service < 0 || area.slotLocal[s] == service)
                            && (remote < 0 || area.slotRemote[s] == remote)
                            && area.slotDuration[s] >= filter.minDuration() && area.slotDuration[s] <= filter.maxDuration()
                            && (!filter.errorsOnly() || area.slotError[s])
                            && (filter.spanName() == null || filter.spanName().equalsIgnoreCase(names.name(area.slotName[s])))) {
                        newest.add(new Found(area, t, start, area.traceId(t)));
                        if (newest.size() > limit) {
                            newest.pollLast();
                        }
                        return;
                    }
                }
            });
        }
        List<Trace> out = new ArrayList<>(newest.size());
        for (Found f : newest) {
            out.add(snapshot(f.area(), f.trace()));
        }
        return out;
    }

    /**
     * Copies of the recent traces (not the protected area) that began in [from, to]: an unbiased sample of the latest
     * traffic, for statistics such as culprit finding (the protected area keeps the slow and failed ones on purpose,
     * which would skew a percentile). Bounded by the store's capacity; costs a copy of their bytes.
     */
    public List<Trace> recentTraces(long fromMicros, long toMicros) {
        List<Trace> out = new ArrayList<>();
        recent.forEachTrace(t -> {
            long start = recent.traceStart(t);
            if (start >= fromMicros && start <= toMicros) {
                out.add(snapshot(recent, t));
            }
        });
        return out;
    }

    /** -1 for no name asked, -2 for a name no span has, else its id. */
    private int nameId(String name) {
        if (name == null) {
            return -1;
        }
        int id = names.find(name);
        return id < 0 ? -2 : id;
    }

    /** Writes traces as Zipkin's API answers them: an array of spans each, as received. */
    public static void writeTrace(Trace t, ByteArrayOutputStream out) {
        out.write('[');
        for (int i = 0; i < t.spans().size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.writeBytes(t.spans().get(i));
        }
        out.write(']');
    }

    /** Local service names, sorted. */
    public List<String> services() {
        TreeSet<String> found = new TreeSet<>();
        for (SpanLog area : List.of(recent, protectedTraces)) {
            area.forEachSlot(s -> {
                String n = names.name(area.slotLocal[s]);
                if (n != null) {
                    found.add(n);
                }
            });
        }
        return new ArrayList<>(found);
    }

    /** Span names (or remote services) recorded by a service, sorted. */
    public List<String> spanNames(String service, boolean remote) {
        int id = names.find(service);
        TreeSet<String> found = new TreeSet<>();
        if (id < 0) {
            return List.of();
        }
        for (SpanLog area : List.of(recent, protectedTraces)) {
            area.forEachSlot(s -> {
                if (area.slotLocal[s] == id) {
                    String n = names.name(remote ? area.slotRemote[s] : area.slotName[s]);
                    if (n != null) {
                        found.add(n);
                    }
                }
            });
        }
        return new ArrayList<>(found);
    }

    /** A caller → callee link, from client spans that name their remote service. */
    public record Link(String parent, String child, long callCount, long errorCount) {}

    public List<Link> dependencies(long fromMicros, long toMicros) {
        int client = names.find("CLIENT");
        Map<Long, long[]> counts = new HashMap<>();
        if (client >= 0) {
            for (SpanLog area : List.of(recent, protectedTraces)) {
                area.forEachSlot(s -> {
                    if (area.slotKind[s] == client && area.slotLocal[s] >= 0 && area.slotRemote[s] >= 0
                            && area.slotTimestamp[s] >= fromMicros && area.slotTimestamp[s] <= toMicros) {
                        long[] c = counts.computeIfAbsent(((long) area.slotLocal[s] << 32) | area.slotRemote[s],
                                k -> new long[2]);
                        c[0]++;
                        if (area.slotError[s]) {
                            c[1]++;
                        }
                    }
                });
            }
        }
        TreeMap<String, Link> sorted = new TreeMap<>();
        counts.forEach((k, c) -> {
            String parent = names.name((int) (k >>> 32));
            String child = names.name((int) (long) k);
            sorted.put(parent + "\u0000" + child, new Link(parent, child, c[0], c[1]));
        });
        return new ArrayList<>(sorted.values());
    }

    public int spanCount() {
        return recent.spans() + protectedTraces.spans();
    }

    public int traceCount() {
        return recent.traces() + protectedTraces.traces();
    }

    public int protectedTraceCount() {
        return protectedTraces.traces();
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

    /** Spans larger than an area's whole log, which no eviction could make room for. */
    public long droppedTooLarge() {
        return droppedTooLarge;
    }

    /** Distinct names (span names, kinds, services) the stored spans use. */
    int nameCount() {
        return names.size();
    }

    /** Lower-case hex: 32 digits when {@code wide}, else 16 (of {@code lo}). */
    static String hexId(long hi, long lo, boolean wide) {
        String l = String.format("%016x", lo);
        return wide ? String.format("%016x", hi) + l : l;
    }

    /** {hi, lo} of a 16- or 32-digit hex id, or null when it is not one. */
    static long[] parseId(String id) {
        int n = id.length();
        if (n != 16 && n != 32) {
            return null;
        }
        for (int i = 0; i < n; i++) {
            if (Character.digit(id.charAt(i), 16) < 0 || id.charAt(i) > 'f') {
                return null;
            }
        }
        return new long[]{n == 32 ? Long.parseUnsignedLong(id, 0, 16, 16) : 0, Long.parseUnsignedLong(id, n - 16, n, 16)};
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
