package dev.weft.dataplane.transport;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.concurrent.TimeUnit;

/**
 * The connections of one Worker loop that must keep making progress (a client between requests, a client sending a
 * request body, an app sending an answer body), checked by one task per tick, rather than a task scheduled per
 * connection or a clock read per read. A connection has one {@link Watch}, made with it: an intrusive list node,
 * linked only while the connection is timed, so timing allocates nothing, and each read costs one int increment
 * ({@link Watch#progressed()}). Each tick notes whether a watch's count moved since the previous tick; a watch whose
 * count has not moved for its timeout has stalled. A wait this side made (AUTO_READ off: back-pressure) is not one:
 * the peer is not the slow one, and the clock starts again.
 *
 * <p>A stall is never reported early (the clock starts again at the tick that sees progress, or the end of a pause,
 * which comes after it) and at most about two ticks late. A tick is a tenth of the shortest timeout timed on the loop, between
 * {@link #MIN_TICK_NANOS} and {@link #MAX_TICK_NANOS}: with timeouts of a minute a Worker wakes once a second while
 * some connection is timed, and not at all while none is.
 *
 * <p>Thread: one instance per Worker loop ({@link #of}); every method runs on that loop.
 */
public final class StallTimer {
    static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    static final long MAX_TICK_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final FastThreadLocal<StallTimer> PER_LOOP = new FastThreadLocal<>();

    private final EventLoop loop;
    private final Runnable tick = this::tick;
    private long tickNanos = MAX_TICK_NANOS;
    private Watch head;
    /** The next tick while one is scheduled; null while nothing is timed, or while a tick runs. */
    private ScheduledFuture<?> nextTick;
    private boolean inTick;

    /** The clock of one connection, made once per connection by what owns it. */
    public static final class Watch {
        private final Runnable onStall;
        private StallTimer timer;
        private Channel channel;
        private Watch prev;
        private Watch next;
        private boolean linked;
        /** Found stalled by the tick now running, and not timed again since. */
        private boolean stalling;
        private Watch nextStalled;
        private long timeoutNanos;
        private int progress;
        private int seen;
        /** The previous tick found reading paused: it may have resumed any time since, so the clock starts again. */
        private boolean wasPaused;
        private long since;

        /** @param onStall called, on the loop, when a timed connection made no progress for its timeout */
        public Watch(Runnable onStall) {
            this.onStall = onStall;
        }

        /** Something arrived: the clock starts again. An int increment, whether or not the watch is timed. */
        public void progressed() {
            progress++;
        }

        /**
         * Times {@code channel} for {@code timeoutNanos} from now on (a new phase begins, so its clock starts now), or
         * stops timing it when {@code timeoutNanos} is 0. Call on the channel's loop. Once it stalls, the watch is no
         * longer timed, and {@code onStall} runs once, unless the connection is timed again first.
         */
        public void time(Channel channel, long timeoutNanos) {
            stalling = false;
            progress++;
            if (timeoutNanos <= 0) {
                if (linked) {
                    timer.unlink(this);
                }
                return;
            }
            this.timeoutNanos = timeoutNanos;
            if (!linked) {
                if (timer == null) {
                    this.channel = channel;
                    timer = of(channel.eventLoop());
                }
                timer.link(this);
            }
        }

        /** Whether the connection is timed now. */
        public boolean timed() {
            return linked;
        }

        private boolean paused() {
            return !channel.config().isAutoRead();
        }
    }

    private StallTimer(EventLoop loop) {
        this.loop = loop;
    }

    /** The timer of {@code loop}; must be called on that loop. */
    public static StallTimer of(EventLoop loop) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("a loop's stall timer is used from that loop only");
        }
        StallTimer t = PER_LOOP.get();
        if (t == null || t.loop != loop) { // another loop on the same thread: only test loops (EmbeddedChannel) do that
            t = new StallTimer(loop);
            PER_LOOP.set(t);
        }
        return t;
    }

    private void link(Watch w) {
        w.linked = true;
        w.prev = null;
        w.next = head;
        if (head != null) {
            head.prev = w;
        }
        head = w;
        long wanted = Math.clamp(w.timeoutNanos / 10, MIN_TICK_NANOS, MAX_TICK_NANOS);
        if (inTick) {
            tickNanos = Math.min(tickNanos, wanted); // the running tick schedules the next one
        } else if (nextTick == null || wanted < tickNanos) {
            // A shorter timeout than any so far must not wait out a long tick already scheduled. Rare: the
            // timeouts of one sidecar are few, so the tick settles at the shortest after its first links.
            if (nextTick != null) {
                nextTick.cancel(false);
            }
            tickNanos = Math.min(tickNanos, wanted);
            nextTick = loop.schedule(tick, tickNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void unlink(Watch w) {
        if (w.prev == null) {
            head = w.next;
        } else {
            w.prev.next = w.next;
        }
        if (w.next != null) {
            w.next.prev = w.prev;
        }
        w.prev = null;
        w.next = null;
        w.linked = false;
    }

    private void tick() {
        nextTick = null;
        inTick = true;
        long now = System.nanoTime();
        // Unlink every stalled watch first, chained through a field of their own, and only then call them: a stall
        // closes connections, which times or unlinks other watches, and must not do so under this walk.
        Watch stalled = null;
        for (Watch w = head; w != null; ) {
            Watch next = w.next;
            boolean paused = w.paused();
            if (w.progress != w.seen || paused || w.wasPaused) {
                w.seen = w.progress;
                w.since = now;
                w.wasPaused = paused;
            } else if (now - w.since >= w.timeoutNanos) {
                unlink(w);
                w.stalling = true;
                w.nextStalled = stalled;
                stalled = w;
            }
            w = next;
        }
        RuntimeException failure = null;
        while (stalled != null) {
            Watch w = stalled;
            stalled = w.nextStalled;
            w.nextStalled = null;
            if (w.stalling) { // not timed again by an earlier stall's consequences
                w.stalling = false;
                try {
                    w.onStall.run();
                } catch (RuntimeException e) { // one connection's failure must not stop the others' timeouts
                    failure = failure == null ? e : failure;
                }
            }
        }
        inTick = false;
        if (head != null) {
            nextTick = loop.schedule(tick, tickNanos, TimeUnit.NANOSECONDS);
        }
        if (failure != null) {
            throw failure; // logged by the loop, like any task's
        }
    }
}
