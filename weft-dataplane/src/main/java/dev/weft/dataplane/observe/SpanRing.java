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
 * <p>Threads: {@link #offer} on the owning Worker only (threads without a ring of their own offer into a shared one
 * holding its monitor); {@link #drainTo} on the exporter thread only; {@link #size} anywhere.
 */
final class SpanRing {
    private static final VarHandle WRITTEN;
    private static final VarHandle READ;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WRITTEN = l.findVarHandle(SpanRing.class, "written", long.class);
            READ = l.findVarHandle(SpanRing.class, "read", long.class);
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

    /** @param capacity spans at most; rounded up to a power of two */
    SpanRing(int capacity) {
        int size = capacity <= 1 ? 1 : Integer.highestOneBit(capacity - 1) << 1;
        this.slots = new ObservedExchange[size];
        this.mask = size - 1;
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

    /** Spans waiting. */
    int size() {
        return (int) ((long) WRITTEN.getAcquire(this) - (long) READ.getAcquire(this));
    }
}
