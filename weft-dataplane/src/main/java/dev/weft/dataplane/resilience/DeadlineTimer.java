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
 * <p>A deadline fires up to one tick late. The check runs only while some deadline is pending, so an idle sidecar
 * is not woken. Each tick visits every pending deadline (they are not sorted, since a caller's budget can be
 * shorter than the policy's): a few thousand in flight per Worker cost microseconds per tick.
 *
 * <p>Thread: one instance per Worker loop ({@link #of}); every method runs on that loop.
 */
public final class DeadlineTimer {
    static final long TICK_MILLIS = 10;
    private static final FastThreadLocal<DeadlineTimer> PER_LOOP = new FastThreadLocal<>();

    private final EventLoop loop;
    private final Runnable tick = this::tick;
    private Entry head;
    private Entry tail;
    private boolean ticking;

    /** A deadline: extended by what owns one (an exchange), so that it costs no object of its own. */
    public abstract static class Entry {
        private long deadlineNanos;
        private Entry prev;
        private Entry next;
        private DeadlineTimer timer;

        /** The deadline passed; called on the loop, once, unless cancelled first. */
        protected abstract void expired();

        /** Cancels the deadline if pending; harmless otherwise. */
        public final void cancelDeadline() {
            if (timer != null) {
                timer.unlink(this);
            }
        }
    }

    private DeadlineTimer(EventLoop loop) {
        this.loop = loop;
    }

    /** The timer of {@code loop}; must be called on that loop. */
    public static DeadlineTimer of(EventLoop loop) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("a loop's deadline timer is used from that loop only");
        }
        DeadlineTimer t = PER_LOOP.get();
        if (t == null) {
            t = new DeadlineTimer(loop);
            PER_LOOP.set(t);
        }
        return t;
    }

    /** Arms {@code e} for {@code deadlineNanos} (System.nanoTime() terms); re-arming moves it. */
    public void add(Entry e, long deadlineNanos) {
        e.cancelDeadline();
        e.deadlineNanos = deadlineNanos;
        e.timer = this;
        e.prev = tail;
        e.next = null;
        if (tail == null) {
            head = e;
        } else {
            tail.next = e;
        }
        tail = e;
        if (!ticking) {
            ticking = true;
            loop.schedule(tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private void unlink(Entry e) {
        if (e.prev == null) {
            head = e.next;
        } else {
            e.prev.next = e.next;
        }
        if (e.next == null) {
            tail = e.prev;
        } else {
            e.next.prev = e.prev;
        }
        e.prev = null;
        e.next = null;
        e.timer = null;
    }

    private void tick() {
        long now = System.nanoTime();
        // Unlink every expired entry first, chained through prev, and only then call them: an expiry may cancel
        // other deadlines, which must not happen while this walk holds a pointer into the list.
        Entry fired = null;
        for (Entry e = head; e != null; ) {
            Entry next = e.next;
            if (now - e.deadlineNanos >= 0) {
                unlink(e);
                e.prev = fired;
                fired = e;
            }
            e = next;
        }
        while (fired != null) {
            Entry e = fired;
            fired = e.prev;
            e.prev = null;
            e.expired();
        }
        if (head != null) {
            loop.schedule(tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
        } else {
            ticking = false;
        }
    }
}
