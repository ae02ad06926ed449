package dev.weft.control.trace;

import java.util.Arrays;

/**
 * One area of the span store (the recent spans, or the protected slow and failed traces): spans in arrival order,
 * with no object per span. A span's JSON bytes are appended to the log, a ring of large byte arrays (segments,
 * allocated as the log first fills, then reused); its fields sit at its slot in parallel primitive arrays, slots
 * being a ring too. A trace is a chain of slots (each slot links to the trace's next span) found through an
 * open-addressing table keyed by the trace id's two longs; traces also live in parallel arrays.
 *
 * <p>Eviction is by ring position: the oldest live slot is the first span of the trace that arrived first (a trace
 * leaves whole), so evicting from the tail evicts traces oldest first, and frees the log up to the next live span.
 * Slots of traces evicted earlier leave holes that the tail skips once it reaches them; until then their slots and
 * bytes stay taken. The slot ring has twice the area's span capacity so that holes rarely force an eviction before
 * the span count does: only traces that kept receiving spans long after they began leave, once evicted, holes far
 * ahead of the tail, and then the oldest traces go a little early.
 *
 * <p>Not thread safe: the store's single thread.
 */
final class SpanLog {
    private final int maxSpans;
    private final long logCapacity;
    private final int segmentSize;
    private final byte[][] segments;
    private final NameTable names;
    private long logHead;

    // Slots: a ring of slotCount; sequence numbers [tail, head) are the ones that may be live.
    private final int slotCount;
    private long head;
    private long tail;
    /** Trace of each slot, -1 for a free slot (a hole). */
    private final int[] slotTrace;
    private final int[] slotNext;
    private final long[] slotPos;
    private final int[] slotLength;
    final long[] slotTimestamp;
    final long[] slotDuration;
    final long[] slotId;
    final long[] slotParent;
    final int[] slotName;
    final int[] slotKind;
    final int[] slotLocal;
    final int[] slotRemote;
    final boolean[] slotError;
    private int spans;

    // Traces: at most one per span, plus a free list.
    private final long[] traceHi;
    private final long[] traceLo;
    private final boolean[] traceWide;
    private final int[] traceFirst;
    private final int[] traceLast;
    private final int[] traceSpans;
    private final long[] traceStart;
    private final long[] traceEnd;
    private final boolean[] traceError;
    private final int[] freeTraces;
    private int freeTraceCount;
    private int traces;
    private final ProbeIndex byId;

    /**
     * @param maxSpans      spans the area holds at most
     * @param bytesPerSpan  log bytes per span on average: spans larger than that on average make it hold fewer
     */
    SpanLog(int maxSpans, int bytesPerSpan, NameTable names) {
        this.maxSpans = maxSpans;
        this.names = names;
        long bytes = (long) maxSpans * bytesPerSpan;
        this.segmentSize = (int) Math.min(1 << 20, bytes);
        int segmentCount = (int) ((bytes + segmentSize - 1) / segmentSize);
        this.segments = new byte[segmentCount][];
        this.logCapacity = (long) segmentCount * segmentSize;
        this.slotCount = maxSpans * 2;
        slotTrace = new int[slotCount];
        Arrays.fill(slotTrace, -1);
        slotNext = new int[slotCount];
        slotPos = new long[slotCount];
        slotLength = new int[slotCount];
        slotTimestamp = new long[slotCount];
        slotDuration = new long[slotCount];
        slotId = new long[slotCount];
        slotParent = new long[slotCount];
        slotName = new int[slotCount];
        slotKind = new int[slotCount];
        slotLocal = new int[slotCount];
        slotRemote = new int[slotCount];
        slotError = new boolean[slotCount];
        int maxTraces = maxSpans + 1;
        traceHi = new long[maxTraces];
        traceLo = new long[maxTraces];
        traceWide = new boolean[maxTraces];
        traceFirst = new int[maxTraces];
        traceLast = new int[maxTraces];
        traceSpans = new int[maxTraces];
        traceStart = new long[maxTraces];
        traceEnd = new long[maxTraces];
        traceError = new boolean[maxTraces];
        freeTraces = new int[maxTraces];
        for (int t = 0; t < maxTraces; t++) {
            freeTraces[t] = maxTraces - 1 - t;
        }
        freeTraceCount = maxTraces;
        byId = new ProbeIndex(maxTraces) {
            @Override
            int hashOf(int t) {
                return mix(traceHi[t] * 31 + traceLo[t]);
            }
        };
    }

    int spans() {
        return spans;
    }

    int traces() {
        return traces;
    }

    /** The trace with this id, or -1. */
    int find(long hi, long lo) {
        int h = ProbeIndex.mix(hi * 31 + lo);
        for (int s = byId.home(h); byId.index[s] != 0; s = byId.next(s)) {
            int t = byId.index[s] - 1;
            if (traceLo[t] == lo && traceHi[t] == hi) {
                return t;
            }
        }
        return -1;
    }

    /** Whether {@code count} spans of {@code bytes} in all can be appended without evicting first. */
    boolean hasRoomFor(int count, long bytes) {
        skipHoles();
        return spans + count <= maxSpans && head - tail + count <= slotCount && logHead + bytes - logTail() <= logCapacity;
    }

    /** Whether this area could ever hold {@code count} spans of {@code bytes} in all. */
    boolean couldHold(int count, long bytes) {
        return count <= maxSpans && bytes <= logCapacity;
    }

    /** The trace that arrived first, or -1 when the area is empty. */
    int oldest() {
        skipHoles();
        return head == tail ? -1 : slotTrace[slot(tail)];
    }

    /**
     * Appends one span of trace {@code t} (-1: a new trace with this id); the caller made room
     * ({@link #hasRoomFor}). Takes a reference to each of the span's names.
     *
     * @return the span's trace
     */
    int append(int t, long hi, long lo, boolean wide, byte[] src, int srcOff, int length, long timestamp,
               long duration, long id, long parent, int name, int kind, int local, int remote, boolean error) {
        if (t < 0) {
            t = freeTraces[--freeTraceCount];
            traceHi[t] = hi;
            traceLo[t] = lo;
            traceWide[t] = wide;
            traceFirst[t] = -1;
            traceSpans[t] = 0;
            traceStart[t] = Long.MAX_VALUE;
            traceEnd[t] = Long.MIN_VALUE;
            traceError[t] = false;
            byId.insert(t);
            traces++;
        }
        int s = slot(head++);
        slotTrace[s] = t;
        slotNext[s] = -1;
        slotPos[s] = logHead;
        slotLength[s] = length;
        write(src, srcOff, length);
        slotTimestamp[s] = timestamp;
        slotDuration[s] = duration;
        slotId[s] = id;
        slotParent[s] = parent;
        slotName[s] = name;
        slotKind[s] = kind;
        slotLocal[s] = local;
        slotRemote[s] = remote;
        slotError[s] = error;
        names.retain(name);
        names.retain(kind);
        names.retain(local);
        names.retain(remote);
        if (traceFirst[t] < 0) {
            traceFirst[t] = s;
        } else {
            slotNext[traceLast[t]] = s;
        }
        traceLast[t] = s;
        traceSpans[t]++;
        if (timestamp > 0) {
            traceStart[t] = Math.min(traceStart[t], timestamp);
            traceEnd[t] = Math.max(traceEnd[t], timestamp + duration);
        }
        traceError[t] |= error;
        spans++;
        return t;
    }

    /** Copies trace {@code t} of {@code from} into this area as a new trace (room was made by the caller). */
    void copy(SpanLog from, int t, byte[] scratch) {
        int into = -1;
        for (int s = from.traceFirst[t]; s >= 0; s = from.slotNext[s]) {
            int n = from.slotLength[s];
            byte[] buf = n <= scratch.length ? scratch : new byte[n];
            from.read(from.slotPos[s], buf, 0, n);
            into = append(into, from.traceHi[t], from.traceLo[t], from.traceWide[t], buf, 0, n,
                    from.slotTimestamp[s], from.slotDuration[s], from.slotId[s], from.slotParent[s], from.slotName[s],
                    from.slotKind[s], from.slotLocal[s], from.slotRemote[s], from.slotError[s]);
        }
    }

    /** Removes trace {@code t} and all its spans, giving back their names. */
    void remove(int t) {
        for (int s = traceFirst[t]; s >= 0; s = slotNext[s]) {
            slotTrace[s] = -1;
            names.release(slotName[s]);
            names.release(slotKind[s]);
            names.release(slotLocal[s]);
            names.release(slotRemote[s]);
            spans--;
        }
        byId.remove(t);
        traceFirst[t] = -1;
        traceSpans[t] = 0;
        freeTraces[freeTraceCount++] = t;
        traces--;
        skipHoles();
    }

    int traceSpans(int t) {
        return traceSpans[t];
    }

    long traceBytes(int t) {
        long n = 0;
        for (int s = traceFirst[t]; s >= 0; s = slotNext[s]) {
            n += slotLength[s];
        }
        return n;
    }

    boolean traceError(int t) {
        return traceError[t];
    }

    /** Epoch microseconds of the trace's earliest span, 0 when no span has a timestamp. */
    long traceStart(int t) {
        return traceStart[t] == Long.MAX_VALUE ? 0 : traceStart[t];
    }

    long traceDuration(int t) {
        return traceStart[t] == Long.MAX_VALUE ? 0 : traceEnd[t] - traceStart[t];
    }

    String traceId(int t) {
        return SpanStore.hexId(traceHi[t], traceLo[t], traceWide[t]);
    }

    /** The trace's first slot; then {@link #nextSlot} until -1. */
    int firstSlot(int t) {
        return traceFirst[t];
    }

    int nextSlot(int s) {
        return slotNext[s];
    }

    byte[] json(int s) {
        byte[] b = new byte[slotLength[s]];
        read(slotPos[s], b, 0, b.length);
        return b;
    }

    /** Calls {@code each} for every live slot, oldest first. */
    void forEachSlot(java.util.function.IntConsumer each) {
        for (long q = tail; q < head; q++) {
            int s = slot(q);
            if (slotTrace[s] >= 0) {
                each.accept(s);
            }
        }
    }

    /** Calls {@code each} with every trace. */
    void forEachTrace(java.util.function.IntConsumer each) {
        for (long q = tail; q < head; q++) {
            int s = slot(q);
            int t = slotTrace[s];
            if (t >= 0 && traceFirst[t] == s) {
                each.accept(t);
            }
        }
    }

    private int slot(long seq) {
        return (int) (seq % slotCount);
    }

    private void skipHoles() {
        while (tail < head && slotTrace[slot(tail)] < 0) {
            tail++;
        }
    }

    private long logTail() {
        return tail == head ? logHead : slotPos[slot(tail)];
    }

    private void write(byte[] src, int off, int length) {
        long pos = logHead;
        while (length > 0) {
            int seg = (int) ((pos % logCapacity) / segmentSize);
            int at = (int) (pos % segmentSize);
            if (segments[seg] == null) {
                segments[seg] = new byte[segmentSize];
            }
            int n = Math.min(length, segmentSize - at);
            System.arraycopy(src, off, segments[seg], at, n);
            off += n;
            length -= n;
            pos += n;
        }
        logHead = pos;
    }

    private void read(long pos, byte[] dst, int off, int length) {
        while (length > 0) {
            int seg = (int) ((pos % logCapacity) / segmentSize);
            int at = (int) (pos % segmentSize);
            int n = Math.min(length, segmentSize - at);
            System.arraycopy(segments[seg], at, dst, off, n);
            off += n;
            length -= n;
            pos += n;
        }
    }
}
