package dev.weft.dataplane.resilience;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;

import java.util.concurrent.TimeUnit;

/**
 * The request deadlines of one Worker loop, checked by one task every {@link #TICK_MILLIS} ms instead of a task
 * scheduled per request. Nearly every request finishes long before its deadline, so a per-request task is made,
 * put in the loop's priority queue and taken out again for nothing: about 70-90 bytes and two O(log n) queue
 * operations per request and per sidecar (JFR and perf, docs/benchmarks.md). Here a request's deadline is an
 * intrusive list node it already owns: adding and cancelling are O(1) and allocate nothing.
 *
 * <p>The lists form a wheel: an entry goes into the slot of the first tick at or after its deadline, and a tick
 * looks only at the slots of the ticks that passed since the last one, and of the one under way. A tick that walked
 * every pending deadline (as this timer first did) touched each in-flight exchange every 10 ms, a cache miss each: 0.9-1.5 µs of CPU per
 * request per side in the mesh at 512 connections (perf, docs/benchmarks.md, session 22). With {@link #SLOTS}
 * slots the wheel turns once in about 10 s, so a request that ends before its deadline is never visited; one
 * whose deadline lies further ahead than a turn is visited once per turn until it is due.
 *
 * <p>A deadline fires up to one tick late. The check runs only while some deadline is pending, so an idle sidecar
 * is not woken.
 *
 * <p>Thread: one instance per Worker loop ({@link #of}); every method runs on that loop.
 */
public final class DeadlineTimer {
    static final long TICK_MILLIS = 10;
    /** Slots of the wheel, a power of two: one turn is {@code SLOTS * TICK_MILLIS} ms (10.24 s). */
    static final int SLOTS = 1024;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
    private static final FastThreadLocal<DeadlineTimer> PER_LOOP = new FastThreadLocal<>();

    private final EventLoop loop;
    private final Runnable tick = this::tick;
    /** Ticks are counted from here, so that System.nanoTime()'s sign does not matter. */
    private final long origin = System.nanoTime();
    private final Entry[] heads;
    private final Entry[] tails;
    private final int mask;
    /** The last tick whose slot was checked. */
    private long checked;
    private int pending;
    private boolean ticking;

    /** A deadline: extended by what owns one (an exchange), so that it costs no object of its own. */
    public abstract static class Entry {
        private long deadlineNanos;
        private Entry prev;
        private Entry next;
        private DeadlineTimer timer;
        private int slot;

        /** The deadline passed; called on the loop, once, unless cancelled first. */
        protected abstract void expired();

        /** Cancels the deadline if pending; harmless otherwise. */
        public final void cancelDeadline() {
            if (timer != null) {
                timer.unlink(this);
            }
        }
    }

    /** A timer of {@code slots} (a power of two) slots; tests turn a small wheel many times. */
    DeadlineTimer(EventLoop loop, int slots) {
        if (Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two: " + slots);
        }
        this.loop = loop;
        this.heads = new Entry[slots];
        this.tails = new Entry[slots];
        this.mask = slots - 1;
    }

    /** The timer of {@code loop}; must be called on that loop. */
    public static DeadlineTimer of(EventLoop loop) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("a loop's deadline timer is used from that loop only");
        }
        DeadlineTimer t = PER_LOOP.get();
        if (t == null) {
            t = new DeadlineTimer(loop, SLOTS);
            PER_LOOP.set(t);
        }
        return t;
    }

    /** Arms {@code e} for {@code deadlineNanos} (System.nanoTime() terms); re-arming moves it. */
    public void add(Entry e, long deadlineNanos) {
        e.cancelDeadline();
        if (!ticking) {
            // The wheel stood still while nothing was pending: the ticks until now count as checked.
            checked = Math.floorDiv(System.nanoTime() - origin, TICK_NANOS);
            ticking = true;
            loop.schedule(tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
        }
        // The first tick at or after the deadline, and never one already checked (a deadline already past fires at
        // the next tick).
        long due = Math.max(Math.ceilDiv(deadlineNanos - origin, TICK_NANOS), checked + 1);
        int s = (int) (due & mask);
        e.deadlineNanos = deadlineNanos;
        e.timer = this;
        e.slot = s;
        e.prev = tails[s];
        e.next = null;
        if (tails[s] == null) {
            heads[s] = e;
        } else {
            tails[s].next = e;
        }
        tails[s] = e;
        pending++;
    }

    private void unlink(Entry e) {
        int s = e.slot;
        if (e.prev == null) {
            heads[s] = e.next;
        } else {
            e.prev.next = e.next;
        }
        if (e.next == null) {
            tails[s] = e.prev;
        } else {
            e.next.prev = e.prev;
        }
        e.prev = null;
        e.next = null;
        e.timer = null;
        pending--;
    }

    private void tick() {
        long now = System.nanoTime();
        long to = Math.floorDiv(now - origin, TICK_NANOS);
        // Up to the slot of the tick under way, whose deadlines that have passed fire now rather than a tick later
        // (this task's period is not aligned with the ticks' boundaries); that slot is checked again next time, since
        // the rest of its deadlines are still to come. Each slot at most once, even when the loop was held up for
        // more than a turn.
        long last = to + 1;
        long from = Math.max(checked + 1, last - mask);
        // Unlink every expired entry first, chained through prev, and only then call them: an expiry may cancel
        // other deadlines, which must not happen while this walk holds a pointer into a list. An entry of a later
        // turn shares its slot with this one's and stays.
        Entry fired = null;
        for (long t = from; t <= last; t++) {
            for (Entry e = heads[(int) (t & mask)]; e != null; ) {
                Entry next = e.next;
                if (now - e.deadlineNanos >= 0) {
                    unlink(e);
                    e.prev = fired;
                    fired = e;
                }
                e = next;
            }
        }
        checked = to; // never behind: checked is only ever set to a tick already reached
        while (fired != null) {
            Entry e = fired;
            fired = e.prev;
            e.prev = null;
            e.expired();
        }
        if (pending > 0) {
            loop.schedule(tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
        } else {
            ticking = false;
        }
    }
}
