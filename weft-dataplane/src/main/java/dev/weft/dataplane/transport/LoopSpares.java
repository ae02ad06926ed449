package dev.weft.dataplane.transport;

import java.util.concurrent.Executor;

/**
 * What a Worker loop's finished requests leave behind for its next ones to carry again (an exchange, an exchange's
 * record), when nothing can reach it any more: a Worker's requests come one after the other, so a few spares a loop
 * replace an allocation per request.
 *
 * <p>An object given back becomes a spare only after the loop's current task has run: it cools until then, so that no
 * frame still on that task's stack (the downstream opening the next pipelined request from inside the end of the
 * previous one, a caller of the answer's listener) can see it become another request's.
 *
 * <p>Bounded: {@code slots} spares and as many cooling; more are left to the garbage collector.
 *
 * <p>Thread: one instance per Worker loop (held in a {@code FastThreadLocal} by its user); every method runs on that
 * loop. Buffers: none (objects come back with their buffers released).
 *
 * @param <T> what is kept
 */
public final class LoopSpares<T> implements Runnable {
    private final Object[] free;
    private int freeCount;
    private final Object[] cooling;
    private int coolingCount;
    private boolean coolingQueued;

    public LoopSpares(int slots) {
        this.free = new Object[slots];
        this.cooling = new Object[slots];
    }

    /** A spare to carry a new request, or null. */
    @SuppressWarnings("unchecked")
    public T take() {
        if (freeCount == 0) {
            return null;
        }
        T x = (T) free[--freeCount];
        free[freeCount] = null;
        return x;
    }

    /** {@code x} is over and nothing can reach it: a spare once {@code loop}'s current task has run. */
    public void giveBack(T x, Executor loop) {
        if (coolingCount == cooling.length) {
            return;
        }
        cooling[coolingCount++] = x;
        if (!coolingQueued) {
            coolingQueued = true;
            loop.execute(this); // the task that ended x has run by the time this does
        }
    }

    /** The cooling objects become spares. */
    @Override
    public void run() {
        coolingQueued = false;
        for (int i = 0; i < coolingCount; i++) {
            if (freeCount < free.length) {
                free[freeCount++] = cooling[i];
            }
            cooling[i] = null;
        }
        coolingCount = 0;
    }
}
