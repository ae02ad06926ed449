package dev.weft.dataplane.exchange;

import io.netty.buffer.ByteBuf;

import java.util.ArrayDeque;
import java.util.function.BiConsumer;

/**
 * Answer pieces that came before the answer's head was relayed: only with the virtual-thread Collaborator, whose
 * relay step runs a hand-off later than the head arrived. Kept in order and passed on right after the head.
 *
 * <p>Thread: the exchange's loop. Buffers: owned here until passed on by {@link #drain} or released by
 * {@link #release}.
 */
final class EarlyAnswer {
    private final ArrayDeque<ByteBuf> pieces = new ArrayDeque<>(4);
    private boolean ended;

    void add(ByteBuf piece, boolean end) {
        pieces.add(piece);
        ended = end;
    }

    /** Passes every piece on, in order, the last one with the answer's end if it came. */
    void drain(BiConsumer<ByteBuf, Boolean> to) {
        ByteBuf b;
        while ((b = pieces.poll()) != null) {
            to.accept(b, ended && pieces.isEmpty());
        }
    }

    void release() {
        ByteBuf b;
        while ((b = pieces.poll()) != null) {
            b.release();
        }
    }
}
