package dev.weft.dataplane.mesh;

import dev.weft.protocol.WmpPing;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a WMP connection flushes what its streams write outside a read: once the loop has run what it is running (one
 * reused task per connection, not a task object per flush), and before the connection closes, in the order written. Netty's embedded channel is the loop: its queued
 * tasks run when the test says so.
 */
class MeshSessionFlushTest {

    private static EmbeddedChannel connection(MeshSession session, boolean consolidating) {
        EmbeddedChannel ch = EmbeddedChannel.builder().build();
        if (consolidating) {
            ch.pipeline().addLast("flush", MeshSession.flushConsolidation()); // as MeshPool and InboundServer
        }
        ch.pipeline().addLast("session", session);
        return ch;
    }

    private static List<Long> written(EmbeddedChannel ch) {
        List<Long> out = new ArrayList<>();
        for (Object m; (m = ch.readOutbound()) != null; ) {
            out.add(((WmpPing) m).payload());
        }
        return out;
    }

    @Test
    void aFrameWrittenOutsideAReadGoesOutOnceTheLoopRunsItsTasksAndTheTaskServesTheNextBurstToo() {
        // (The embedded channel runs its queued tasks after each write, so a burst of several frames cannot be held
        // here; on a Worker the task runs after the work at hand, which is how one flush serves a whole burst.)
        MeshSession session = new MeshSession(null, "peer");
        EmbeddedChannel ch = connection(session, true);
        session.write(new WmpPing(1, false));
        assertThat(written(ch)).as("not flushed while the loop is busy").isEmpty();
        ch.runPendingTasks();
        assertThat(written(ch)).containsExactly(1L);
        session.write(new WmpPing(2, false));
        assertThat(written(ch)).isEmpty();
        ch.runPendingTasks();
        assertThat(written(ch)).as("the task is queued again for the next burst").containsExactly(2L);
        ch.finishAndReleaseAll();
    }

    @Test
    void aCloseSendsWhatWasWrittenBeforeIt() {
        MeshSession session = new MeshSession(null, "peer");
        EmbeddedChannel ch = connection(session, true);
        session.write(new WmpPing(7, false));
        session.write(new WmpPing(8, false));
        ch.close();
        assertThat(written(ch)).containsExactly(7L, 8L);
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void withoutAConsolidatingPipelineEveryFrameIsFlushedAsItIsWritten() {
        MeshSession session = new MeshSession(null, "peer");
        EmbeddedChannel ch = connection(session, false);
        session.write(new WmpPing(5, false));
        assertThat(written(ch)).containsExactly(5L);
        ch.finishAndReleaseAll();
    }
}
