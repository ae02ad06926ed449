package dev.weft.dataplane.exchange;

import dev.weft.dataplane.transport.LoopSpares;
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
 * that ended it has run ({@link LoopSpares}). Every other exchange is left to the garbage collector, as all were before.
 *
 * <p>Bounded: {@link #SLOTS} spares and as many cooling per Worker; more are left to the garbage collector.
 *
 * <p>Thread: one per Worker loop (a {@link FastThreadLocal}); every method runs on that loop. Buffers: none (an
 * exchange comes back with its buffers released).
 */
final class ExchangeSpares {
    static final int SLOTS = 64;

    private static final FastThreadLocal<LoopSpares<ProxyExchange>> PER_LOOP = new FastThreadLocal<>() {
        @Override
        protected LoopSpares<ProxyExchange> initialValue() {
            return new LoopSpares<>(SLOTS);
        }
    };

    private ExchangeSpares() {
    }

    /** The spares of the calling Worker loop. */
    static LoopSpares<ProxyExchange> ofThisLoop() {
        return PER_LOOP.get();
    }
}
