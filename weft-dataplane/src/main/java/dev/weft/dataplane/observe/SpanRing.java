package dev.weft.dataplane.observe;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * One Worker's finished, sampled exchanges waiting for the span exporter: a ring with one writer and one reader.
 * Handing a span over is a store of its reference and a release store of the Worker's own position; the exporter
 * reads the Worker's position and writes its own once per batch. So, per span, nothing is shared
 * between Workers and no atomic operation is made (a queue shared by every Worker cost two contended atomic updates
 * and a node per span: {@code ConcurrentLinkedQueue} plus a shared size counter).
 *
 * <p>Threads: {@link #offer} and {@link #takeSpare} on the owning Worker only (threads without a ring of their own
 * offer into a shared one holding its monitor, and take no spares); {@link #drainTo} and {@link #giveBack} on the
 * exporter thread only; {@link #size} anywhere.
 */
final class SpanRing {
    private static final VarHandle WRITTEN;
    private static final VarHandle READ;
    private static final VarHandle SPARE_WRITTEN;
    private static final VarHandle SPARE_READ;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WRITTEN = l.findVarHandle(SpanRing.class, "written", long.class);
            READ = l.findVarHandle(SpanRing.class, "read", long.class);
            SPARE_WRITTEN = l.findVarHandle(SpanRing.class, "spareWritten", long.class);
            SPARE_READ = l.findVarHandle(SpanRing.class, "spareRead", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ObservedExchange[] slots;
    private final int mask;
    /** Spans offered so far; written by the Worker (release), read by the exporter (acquire) once per batch. */
    private long written;
    /** The Worker's last look at {@link #read}: it reads the exporter's position again only when the ring seems full. */
    private long readSeen;
    /** Spans taken so far; written by the exporter (release) once per batch, read by the Worker when full. */
    private long read;

    /**
     * The other way round: exchanges the exporter encoded, for the Worker to record its next exchanges on (see
     * {@link ObservedExchange#begin}). Written by the exporter ({@link #giveBack}), read by the Worker
     * ({@link #takeSpare}); the same single-writer, single-reader positions as above, made on first use.
     */
    private ObservedExchange[] spares;
    private long spareWritten;
    private long spareReadSeen;
    private long spareRead;

    /** @param capacity spans at most; rounded up to a power of two */
    SpanRing(int capacity) {
        int size = capacity <= 1 ? 1 : Integer.highestOneBit(capacity - 1) << 1;
        this.slots = new ObservedExchange[size];
        this.mask = size - 1;
    }

    /**
     * Exporter: {@code x} was encoded and nothing reads it any more; the Worker may reuse it. Dropped (left to the
     * garbage collector) when the Worker already has a ring's worth of spares.
     */
    void giveBack(ObservedExchange x) {
        ObservedExchange[] s = spares;
        if (s == null) {
            // Published to the Worker by the release store of spareWritten below, which it reads before this field.
            spares = s = new ObservedExchange[slots.length];
        }
        long w = spareWritten;
        if (w - spareReadSeen >= s.length) {
            spareReadSeen = (long) SPARE_READ.getAcquire(this);
            if (w - spareReadSeen >= s.length) {
                return;
            }
        }
        s[(int) w & mask] = x;
        SPARE_WRITTEN.setRelease(this, w + 1);
    }

    /** Worker: an exchange record to reuse, or null when the exporter gave none back (yet). */
    ObservedExchange takeSpare() {
        long r = spareRead;
        if ((long) SPARE_WRITTEN.getAcquire(this) == r) {
            return null;
        }
        ObservedExchange[] s = spares;
        int i = (int) r & mask;
        ObservedExchange x = s[i];
        s[i] = null;
        SPARE_READ.setRelease(this, r + 1);
        return x;
    }

    /** @return false when the ring is full (the span is not taken) */
    boolean offer(ObservedExchange x) {
        long w = written;
        if (w - readSeen >= slots.length) {
            readSeen = (long) READ.getAcquire(this);
            if (w - readSeen >= slots.length) {
                return false;
            }
        }
        slots[(int) w & mask] = x;
        WRITTEN.setRelease(this, w + 1);
        return true;
    }

    /**
     * Exporter: moves up to {@code max} waiting spans into {@code out}, oldest first, and gives their slots back.
     *
     * @return how many were moved
     */
    int drainTo(List<ObservedExchange> out, int max) {
        long r = read;
        long w = (long) WRITTEN.getAcquire(this);
        int n = (int) Math.min(max, w - r);
        for (int k = 0; k < n; k++) {
            int i = (int) (r + k) & mask;
            out.add(slots[i]);
            slots[i] = null;
        }
        READ.setRelease(this, r + n);
        return n;
    }

    /** Writer only: spans offered into this ring so far. */
    long offered() {
        return written;
    }

    /** Spans waiting. */
    int size() {
        return (int) ((long) WRITTEN.getAcquire(this) - (long) READ.getAcquire(this));
    }
}
