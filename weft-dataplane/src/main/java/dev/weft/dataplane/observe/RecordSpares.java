package dev.weft.dataplane.observe;

import dev.weft.dataplane.transport.LoopSpares;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.ThreadExecutorMap;

/**
 * A Worker's exchange records that nothing else reads once their exchange ended (not exported, not logged), recorded
 * on again by its next exchanges. With every request traced, the exporter gave each record back after encoding it
 * ({@link SpanRing#giveBack}); once most requests are not sampled, that path sees a few percent of them, and without
 * this every other request would allocate its record (some 170 bytes) again.
 *
 * <p>A record comes back only after the event-loop task that ended its exchange has run ({@link LoopSpares}), and an
 * exchange calls its trace only while it is not finished, so after that task nothing reaches the record for its old
 * exchange. A thread that runs no event loop (a test's, a benchmark's) keeps none.
 *
 * <p>Thread: one per Worker loop (a {@link FastThreadLocal}); every method runs on that loop. Buffers: none.
 */
final class RecordSpares {
    static final int SLOTS = 64;

    private static final FastThreadLocal<RecordSpares> PER_THREAD = new FastThreadLocal<>() {
        @Override
        protected RecordSpares initialValue() {
            return new RecordSpares(ThreadExecutorMap.currentExecutor());
        }
    };

    /** The loop this thread runs, or null when it runs none (then nothing is kept). */
    private final EventExecutor loop;
    private final LoopSpares<ObservedExchange> spares = new LoopSpares<>(SLOTS);

    private RecordSpares(EventExecutor loop) {
        this.loop = loop;
    }

    /** The spares of the calling thread. */
    static RecordSpares ofThisThread() {
        return PER_THREAD.get();
    }

    /** A record to begin again, or null. */
    ObservedExchange take() {
        return spares.take();
    }

    /** {@code x}'s exchange ended and nothing else reads it: a spare once the current task has run. */
    void giveBack(ObservedExchange x) {
        if (loop != null) {
            spares.giveBack(x, loop);
        }
    }
}
