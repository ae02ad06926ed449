package dev.weft.dataplane.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Worker's stall timer, on a real loopback connection (a watch times a channel, and reads its AUTO_READ): a
 * stall is reported once and never early, progress and a pause this side made keep it away, {@code time(0)} stops it,
 * and a stall whose consequences time another stalled watch again does not report that one's stale stall.
 */
class StallTimerTest {
    private static final long TIMEOUT = TimeUnit.MILLISECONDS.toNanos(200);

    private final Transport transport = new Transport(1);
    private final EventLoop loop = transport.workers().next();
    private final List<String> stalls = new CopyOnWriteArrayList<>();
    private Channel server;
    private Channel channel;

    @BeforeEach
    void connect() throws Exception {
        server = new ServerBootstrap().group(transport.manager(), transport.workers())
                .channel(transport.serverChannelClass()).childHandler(new ChannelInboundHandlerAdapter())
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        channel = new Bootstrap().group(loop).channel(transport.channelClass()).handler(new ChannelInboundHandlerAdapter())
                .connect(server.localAddress()).sync().channel();
    }

    @AfterEach
    void close() {
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        transport.close();
    }

    /** A watch that records its name and when it stalled. */
    private final class Named {
        final String name;
        final CountDownLatch stalled = new CountDownLatch(1);
        final StallTimer.Watch watch = new StallTimer.Watch(this::stalled);
        volatile long stalledAt;
        Runnable also = () -> { };

        Named(String name) {
            this.name = name;
        }

        private void stalled() {
            stalledAt = System.nanoTime();
            stalls.add(name);
            also.run();
            stalled.countDown();
        }
    }

    private void onLoop(Runnable r) throws Exception {
        loop.submit(r).get(5, TimeUnit.SECONDS);
    }

    /** Lets the timer tick a few more times. */
    private void afterTicks(int ticks) throws Exception {
        loop.schedule(() -> { }, ticks * TIMEOUT / 10 + StallTimer.MIN_TICK_NANOS, TimeUnit.NANOSECONDS)
                .get(5, TimeUnit.SECONDS);
    }

    @Test
    void aConnectionThatMakesNoProgressStallsOnceAndNeverBeforeItsTimeout() throws Exception {
        Named idle = new Named("idle");
        long start = System.nanoTime();
        onLoop(() -> idle.watch.time(channel, TIMEOUT));

        assertThat(idle.stalled.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(idle.stalledAt - start).isGreaterThanOrEqualTo(TIMEOUT);
        afterTicks(30);
        assertThat(stalls).containsExactly("idle");
        assertThat(idle.watch.timed()).as("no longer timed once stalled").isFalse();
    }

    @Test
    void progressKeepsAStallAwayAndTimeZeroStopsTheClock() throws Exception {
        Named busy = new Named("busy");
        Named stopped = new Named("stopped");
        onLoop(() -> {
            busy.watch.time(channel, TIMEOUT);
            stopped.watch.time(channel, TIMEOUT);
            stopped.watch.time(channel, 0);
        });
        // Progress every 20 ms for 600 ms: three times the timeout in all, never a tenth of it without progress. Made
        // by a task on the loop at a fixed rate, not sent from this thread: a pause of this thread longer than the
        // timeout (a loaded machine) left the ticks without progress. A pause of the loop cannot: the progress due
        // before a tick runs before it, overdue tasks running in the order they were due.
        AtomicInteger left = new AtomicInteger(30);
        AtomicLong lastProgress = new AtomicLong();
        CompletableFuture<List<String>> stallsWhileProgressing = new CompletableFuture<>();
        ScheduledFuture<?> progress = loop.scheduleAtFixedRate(() -> {
            if (left.getAndDecrement() > 0) {
                lastProgress.set(System.nanoTime()); // before the progress, so the stall is measured from after it
                busy.watch.progressed();
            } else {
                stallsWhileProgressing.complete(List.copyOf(stalls)); // on the loop, where stalls are reported
            }
        }, 20, 20, TimeUnit.MILLISECONDS);
        List<String> stalledMeanwhile = stallsWhileProgressing.get(10, TimeUnit.SECONDS);
        progress.cancel(false);
        assertThat(stalledMeanwhile).as("nothing stalled while progress came").isEmpty();

        assertThat(busy.stalled.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(busy.stalledAt - lastProgress.get()).isGreaterThanOrEqualTo(TIMEOUT);
        afterTicks(30);
        assertThat(stalls).containsExactly("busy");
    }

    @Test
    void aConnectionThisSidePausedNeverStallsUntilItReadsAgain() throws Exception {
        Named paused = new Named("paused");
        onLoop(() -> {
            channel.config().setAutoRead(false);
            paused.watch.time(channel, TIMEOUT);
        });
        afterTicks(40);
        assertThat(stalls).as("back-pressure is not the peer's stall").isEmpty();

        long resumed = System.nanoTime();
        onLoop(() -> channel.config().setAutoRead(true));
        assertThat(paused.stalled.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(paused.stalledAt - resumed).isGreaterThanOrEqualTo(TIMEOUT);
    }

    @Test
    void aStallThatTimesAnotherStalledWatchAgainLeavesThatOneToItsNewTimeout() throws Exception {
        Named first = new Named("first");
        Named second = new Named("second");
        // Whichever stalls first (both are due in the same tick) starts the other's clock again, as a closed
        // connection starting a new phase on another one would.
        first.also = () -> {
            if (second.stalledAt == 0) {
                second.watch.time(channel, TIMEOUT);
            }
        };
        second.also = () -> {
            if (first.stalledAt == 0) {
                first.watch.time(channel, TIMEOUT);
            }
        };
        onLoop(() -> {
            first.watch.time(channel, TIMEOUT);
            second.watch.time(channel, TIMEOUT);
        });

        assertThat(first.stalled.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(second.stalled.await(5, TimeUnit.SECONDS)).isTrue();
        afterTicks(30);
        assertThat(stalls).as("each once").hasSize(2).containsExactlyInAnyOrder("first", "second");
        assertThat(Math.abs(first.stalledAt - second.stalledAt)).as("the second after its new timeout")
                .isGreaterThanOrEqualTo(TIMEOUT);
    }

    @Test
    void aLoopsTimerIsUsedOnThatLoopOnly() {
        assertThatThrownBy(() -> StallTimer.of(loop)).isInstanceOf(IllegalStateException.class);
    }
}
