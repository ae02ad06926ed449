package dev.weft.dataplane.exchange;

import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.upstream.UpstreamCall;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.ArrayDeque;

/**
 * One exchange's request body on its way upstream: the pieces read but not yet sent, the credit owed to the
 * downstream for pieces sent, and a copy of a whole small body kept for a retry.
 *
 * <p>Thread: the exchange's loop. Buffers: pieces are owned here from {@link #add} until given to the upstream call
 * (which then owns them) or released by {@link #release}; so is the kept copy.
 */
final class RequestBody {
    /** A body up to this size that is already complete rides in the head's frame/write. */
    private static final int INLINE_LIMIT = 256 * 1024;

    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>(2);
    private boolean complete;
    private int uncredited;
    private ByteBuf kept;
    private long sent;

    boolean complete() {
        return complete;
    }

    /** Body bytes sent upstream so far, over all attempts. */
    long sent() {
        return sent;
    }

    /** A piece from the downstream ({@code end}: the last). */
    void add(ByteBuf piece, boolean end) {
        if (end) {
            complete = true;
        } else if (!piece.isReadable()) {
            piece.release(); // nothing to carry, and no end to mark
            return;
        }
        pending.add(piece);
    }

    /** Whether the body could be sent again whole: none of it was sent yet, a copy was kept, or it is empty. */
    boolean replayable(boolean attemptSent) {
        return !attemptSent || kept != null || (complete && pending.isEmpty() && sent == 0);
    }

    /** Whether the whole body goes with the head: it is complete and one small piece, or was kept, or is empty. */
    boolean wholeForHead() {
        return kept != null || complete && (pending.isEmpty()
                || pending.size() == 1 && pending.peek().readableBytes() <= INLINE_LIMIT);
    }

    /**
     * What goes with the head: the whole body when {@link #wholeForHead()}, else nothing (the pieces follow by
     * {@link #pump}). {@code keep}: a retry may follow, so keep a copy of a whole body.
     */
    ByteBuf forHead(boolean keep) {
        if (kept != null) {
            return kept.retainedDuplicate(); // a retry resends the body kept from the first attempt
        }
        if (!wholeForHead() || pending.isEmpty()) {
            return Unpooled.EMPTY_BUFFER;
        }
        ByteBuf body = pending.poll();
        if (keep) {
            kept = body.retainedDuplicate();
        }
        sent += body.readableBytes(); // no credit: the body is complete, the downstream sends no more
        return body;
    }

    /**
     * Sends pending pieces while the upstream takes them.
     *
     * @return true when nothing is left pending
     */
    boolean pump(UpstreamCall call, TrafficMetrics traffic) {
        ByteBuf c;
        while ((c = pending.peek()) != null && call.canSend()) {
            pending.poll();
            boolean last = complete && pending.isEmpty();
            int n = c.readableBytes();
            traffic.bytesIn(n);
            sent += n;
            if (!last) {
                uncredited += n; // credit for the last piece would be for bytes the downstream will never send
            }
            call.sendData(c, last);
        }
        return pending.isEmpty();
    }

    /** Bytes sent since the downstream was last credited; resets the count. */
    int takeCredit() {
        int n = uncredited;
        uncredited = 0;
        return n;
    }

    boolean owesCredit() {
        return uncredited > 0;
    }

    void release() {
        ByteBuf c;
        while ((c = pending.poll()) != null) {
            c.release();
        }
        if (kept != null) {
            kept.release();
            kept = null;
        }
    }
}
