package dev.weft.dataplane.exchange;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * A Worker's finished exchanges, carried again by its next requests: an exchange and its request body were about
 * 190 bytes per request on each side of a hop (JFR, docs/benchmarks.md), and a Worker's requests come one after the
 * other.
 *
 * <p>Only an exchange nothing can reach any more comes back here ({@link ProxyExchange#finish}): one that went the
 * straight way, each step complete when it returned (so no listener of a queue slot or of a dial holds it), one attempt,
 * its request and its answer each whole in one piece (so no write listener of a streamed answer holds it), on the
 * event-loop Collaborator (a virtual thread holds its exchange until it ends). And it comes back only after the task
 * that ended it has run: it cools until then, so no frame still on that task's stack (the downstream starting the next
 * pipelined request, a caller of the answer's listener) can see it become another request. Every other exchange is
 * left to the garbage collector, as all were before.
 *
 * <p>Bounded: {@link #SLOTS} spares and as many cooling per Worker; more are left to the garbage collector.
 *
 * <p>Thread: one per Worker loop (a {@link FastThreadLocal}); every method runs on that loop. Buffers: none (an
 * exchange comes back with its buffers released).
 */
final class ExchangeSpares implements Runnable {
    static final int SLOTS = 64;

    private static final FastThreadLocal<ExchangeSpares> PER_LOOP = new FastThreadLocal<>() {
        @Override
        protected ExchangeSpares initialValue() {
            return new ExchangeSpares();
        }
    };

    private final ProxyExchange[] free = new ProxyExchange[SLOTS];
    private int freeCount;
    private final ProxyExchange[] cooling = new ProxyExchange[SLOTS];
    private int coolingCount;
    private boolean coolingQueued;

    private ExchangeSpares() {
    }

    /** The spares of the calling Worker loop. */
    static ExchangeSpares ofThisLoop() {
        return PER_LOOP.get();
    }

    /** A spare exchange to open again, or null. */
    ProxyExchange take() {
        if (freeCount == 0) {
            return null;
        }
        ProxyExchange x = free[--freeCount];
        free[freeCount] = null;
        return x;
    }

    /** {@code x} is over and nothing can reach it: a spare once {@code loop}'s current task has run. */
    void giveBack(ProxyExchange x, EventLoop loop) {
        if (coolingCount == SLOTS) {
            return;
        }
        cooling[coolingCount++] = x;
        if (!coolingQueued) {
            coolingQueued = true;
            loop.execute(this); // the task that ended x has run by the time this does
        }
    }

    /** The cooling exchanges become spares. */
    @Override
    public void run() {
        coolingQueued = false;
        for (int i = 0; i < coolingCount; i++) {
            if (freeCount < SLOTS) {
                free[freeCount++] = cooling[i];
            }
            cooling[i] = null;
        }
        coolingCount = 0;
    }
}
