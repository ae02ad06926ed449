package dev.weft.dataplane.resilience;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DeadlineTimerTest {
    private final DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
    private final EventLoop loop = group.next();
    private final List<String> fired = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /** Records its name and the time it fired; may cancel another entry when it fires. */
    private final class Named extends DeadlineTimer.Entry {
        final String name;
        final long deadline;
        long firedAt;
        DeadlineTimer.Entry cancels;
        final CountDownLatch done = new CountDownLatch(1);

        Named(String name, long deadline) {
            this.name = name;
            this.deadline = deadline;
        }

        @Override
        protected void expired() {
            firedAt = System.nanoTime();
            fired.add(name);
            if (cancels != null) {
                cancels.cancelDeadline();
            }
            done.countDown();
        }
    }

    @Test
    void aDeadlineFiresOnceNotBeforeItsTimeAndACancelledOneNever() throws Exception {
        long now = System.nanoTime();
        Named late = new Named("late", now + TimeUnit.MILLISECONDS.toNanos(60));
        Named cancelled = new Named("cancelled", now + TimeUnit.MILLISECONDS.toNanos(20));
        Named soon = new Named("soon", now + TimeUnit.MILLISECONDS.toNanos(20));
        loop.submit(() -> {
            DeadlineTimer t = DeadlineTimer.of(loop);
            t.add(late, late.deadline);
            t.add(cancelled, cancelled.deadline);
            t.add(soon, soon.deadline);
            cancelled.cancelDeadline();
        }).get(5, TimeUnit.SECONDS);
        assertThat(late.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(soon.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(late.firedAt - late.deadline).isNotNegative();
        assertThat(soon.firedAt - soon.deadline).isNotNegative();
        // One more tick passes: nothing fires twice, and the cancelled entry never fires. In any order: on a loaded
        // machine the first tick can come 40 ms late, and then both are due in one tick, which fires its entries
        // in list order, not deadline order (each still not before its time, checked above).
        loop.schedule(() -> { }, 3 * DeadlineTimer.TICK_MILLIS, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        assertThat(fired).containsExactlyInAnyOrder("soon", "late");
    }

    @Test
    void anExpiryThatCancelsAnotherDueEntryAndReArmingMovesTheDeadline() throws Exception {
        long now = System.nanoTime();
        Named first = new Named("first", now);
        Named second = new Named("second", now);
        Named moved = new Named("moved", now);
        first.cancels = second;
        second.cancels = first;
        loop.submit(() -> {
            DeadlineTimer t = DeadlineTimer.of(loop);
            t.add(first, now);
            t.add(second, now);
            t.add(moved, now);
            t.add(moved, now + TimeUnit.MILLISECONDS.toNanos(40)); // re-armed later: fires once, at the later time
        }).get(5, TimeUnit.SECONDS);
        assertThat(moved.done.await(5, TimeUnit.SECONDS)).isTrue();
        loop.schedule(() -> { }, 3 * DeadlineTimer.TICK_MILLIS, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        // Both were due in the same tick and unlinked before either ran, so both fire; "moved" fires once, last.
        assertThat(fired).containsExactlyInAnyOrder("first", "second", "moved");
        assertThat(fired.getLast()).isEqualTo("moved");
        assertThat(moved.firedAt - (now + TimeUnit.MILLISECONDS.toNanos(40))).isNotNegative();
    }

    @Test
    void deadlinesSeveralTurnsOfASmallWheelAheadFireOnceAndNotEarly() throws Exception {
        // Four slots: the wheel turns every 40 ms, so these deadlines share slots with ones a turn or more apart.
        DeadlineTimer t = new DeadlineTimer(loop, 4);
        long now = System.nanoTime();
        List<Named> all = new java.util.ArrayList<>();
        for (int ms : new int[] {5, 15, 45, 55, 95, 130, 170}) {
            all.add(new Named("at" + ms, now + TimeUnit.MILLISECONDS.toNanos(ms)));
        }
        Named cancelled = new Named("cancelled", now + TimeUnit.MILLISECONDS.toNanos(55));
        Named movedBack = new Named("movedBack", now + TimeUnit.MILLISECONDS.toNanos(150));
        loop.submit(() -> {
            all.forEach(n -> t.add(n, n.deadline));
            t.add(cancelled, cancelled.deadline);
            t.add(movedBack, now + TimeUnit.MILLISECONDS.toNanos(15)); // re-armed to a later turn below
            t.add(movedBack, movedBack.deadline);
        }).get(5, TimeUnit.SECONDS);
        // Hold the loop up for more than a whole turn, so one tick has every slot to check.
        loop.submit(() -> sleep(100)).get(5, TimeUnit.SECONDS);
        loop.submit(cancelled::cancelDeadline).get(5, TimeUnit.SECONDS); // past due while held up: may have fired
        for (Named n : all) {
            assertThat(n.done.await(5, TimeUnit.SECONDS)).as(n.name).isTrue();
            assertThat(n.firedAt - n.deadline).as(n.name).isNotNegative();
        }
        assertThat(movedBack.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(movedBack.firedAt - movedBack.deadline).isNotNegative();
        loop.schedule(() -> { }, 3 * DeadlineTimer.TICK_MILLIS, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        assertThat(fired).doesNotHaveDuplicates().containsAll(all.stream().map(n -> n.name).toList())
                .contains("movedBack");
    }

    @Test
    void aCancelledDeadlineOfALaterTurnNeverFires() throws Exception {
        DeadlineTimer t = new DeadlineTimer(loop, 4);
        long now = System.nanoTime();
        Named kept = new Named("kept", now + TimeUnit.MILLISECONDS.toNanos(90));
        Named cancelled = new Named("cancelled", now + TimeUnit.MILLISECONDS.toNanos(90));
        loop.submit(() -> {
            t.add(kept, kept.deadline);
            t.add(cancelled, cancelled.deadline);
        }).get(5, TimeUnit.SECONDS);
        loop.schedule(cancelled::cancelDeadline, 30, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        assertThat(kept.done.await(5, TimeUnit.SECONDS)).isTrue();
        loop.schedule(() -> { }, 3 * DeadlineTimer.TICK_MILLIS, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        assertThat(fired).containsExactly("kept");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aLoopsTimerIsUsedOnThatLoopOnly() {
        assertThatThrownBy(() -> DeadlineTimer.of(loop)).isInstanceOf(IllegalStateException.class);
    }
}
