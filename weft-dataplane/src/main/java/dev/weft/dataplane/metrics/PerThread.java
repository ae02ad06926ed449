package dev.weft.dataplane.metrics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * One cell per writing thread, merged when read: how metrics written by every Worker avoid sharing a cache line per
 * increment. A Worker finds its cell by thread identity among a handful (no thread-local map, no atomic operation)
 * and writes it with plain stores that only it makes ({@link #add}: an opaque store, so that a reader on another
 * thread sees whole values, soon); a scrape sums the cells. A LongAdder costs an atomic operation per increment, and
 * HdrHistogram's ConcurrentHistogram four per record, on words every Worker writes: at two Workers those lines move
 * between the cores on each request (docs/observability.md, "Why benchmarks.md said 6%...").
 *
 * <p>Threads that are not a sidecar's loops do not each get a cell: virtual threads (the virtual-thread
 * collaborator) and platform threads beyond {@value #MAX_CELLS} share one cell, whose writers must hold its monitor
 * ({@link #isShared}).
 *
 * <p>Threads: {@link #get} on any thread; {@link #forEach} and {@link #sum} on a reader (a scrape).
 *
 * @param <C> the cell: arrays of counters, histograms
 */
public final class PerThread<C> {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    /** More than a sidecar has loops; tests and tools may write from many more threads. */
    static final int MAX_CELLS = 64;

    /** The owners and their cells, index for index; replaced whole when a thread registers. */
    private record Cells(Thread[] owners, Object[] cells) {}

    private final Supplier<C> factory;
    /** Made when first needed: a sidecar's Workers never use it, and a cell may be a kilobyte. */
    private volatile C shared;
    private volatile Cells cells = new Cells(new Thread[0], new Object[0]);

    public PerThread(Supplier<C> factory) {
        this.factory = factory;
    }

    /** The calling thread's cell; the shared one (see {@link #isShared}) for a virtual thread or beyond the cap. */
    @SuppressWarnings("unchecked")
    public C get() {
        Thread t = Thread.currentThread();
        Cells c = cells;
        Thread[] owners = c.owners;
        for (int i = 0; i < owners.length; i++) {
            if (owners[i] == t) {
                return (C) c.cells[i];
            }
        }
        return t.isVirtual() ? shared() : register(t);
    }

    private C shared() {
        C s = shared;
        if (s == null) {
            synchronized (this) {
                s = shared;
                if (s == null) {
                    s = factory.get();
                    shared = s;
                }
            }
        }
        return s;
    }

    /** Whether {@code cell} is the shared one: then write it holding its monitor. */
    public boolean isShared(C cell) {
        return cell == shared;
    }

    @SuppressWarnings("unchecked")
    private synchronized C register(Thread t) {
        Cells now = cells;
        for (int i = 0; i < now.owners.length; i++) {
            if (now.owners[i] == t) {
                return (C) now.cells[i];
            }
        }
        if (now.owners.length >= MAX_CELLS) {
            return shared();
        }
        // Made by its own thread: in that thread's allocation buffer, away from the other threads' cells.
        C cell = factory.get();
        int n = now.owners.length;
        Thread[] owners = Arrays.copyOf(now.owners, n + 1);
        Object[] all = Arrays.copyOf(now.cells, n + 1);
        owners[n] = t;
        all[n] = cell;
        cells = new Cells(owners, all);
        return cell;
    }

    /** Every thread's cell, then the shared one if it was made: for merging when read. */
    @SuppressWarnings("unchecked")
    public void forEach(Consumer<C> each) {
        for (Object cell : cells.cells) {
            each.accept((C) cell);
        }
        C s = shared;
        if (s != null) {
            each.accept(s);
        }
    }

    /** The sum over every cell of what {@code of} reads from it. */
    public long sum(ToLongFunction<C> of) {
        long total = 0;
        for (Object cell : cells.cells) {
            @SuppressWarnings("unchecked") C c = (C) cell;
            total += of.applyAsLong(c);
        }
        C s = shared;
        return s == null ? total : total + of.applyAsLong(s);
    }

    /** Adds {@code n} to counter {@code i} of the calling thread's cell, holding the monitor if it is the shared one. */
    public static void add(PerThread<long[]> cells, int i, long n) {
        long[] c = cells.get();
        if (cells.isShared(c)) {
            synchronized (c) {
                add(c, i, n);
            }
        } else {
            add(c, i, n);
        }
    }

    /** Adds one to counters {@code a} and {@code b} of the calling thread's cell: one look-up of the cell for both. */
    public static void increment(PerThread<long[]> cells, int a, int b) {
        long[] c = cells.get();
        if (cells.isShared(c)) {
            synchronized (c) {
                add(c, a, 1);
                add(c, b, 1);
            }
        } else {
            add(c, a, 1);
            add(c, b, 1);
        }
    }

    /** Adds to a counter of a cell only its owner writes (or the shared cell, under its monitor). */
    public static void add(long[] cell, int i, long n) {
        LONGS.setOpaque(cell, i, cell[i] + n);
    }

    /** Reads a counter another thread writes. */
    public static long read(long[] cell, int i) {
        return (long) LONGS.getOpaque(cell, i);
    }
}
