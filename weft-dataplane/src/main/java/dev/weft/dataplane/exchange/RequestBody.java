package dev.weft.dataplane.exchange;

import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.upstream.UpstreamCall;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.ArrayDeque;

/**
 * One exchange's request body on its way upstream: the pieces read but not yet sent, the credit owed to the
 * downstream for pieces sent, and a whole small body kept for a retry.
 *
 * <p>Thread: the exchange's loop. Buffers: pieces are owned here from {@link #add} until given to the upstream call
 * (which then owns them) or released by {@link #release}; so is the kept copy.
 */
final class RequestBody {
    /** A body up to this size that is already complete rides in the head's frame/write. */
    private static final int INLINE_LIMIT = 256 * 1024;

    /** The oldest piece not yet sent, or null; the later ones queue in {@code more}, made for a second piece. */
    private ByteBuf first;
    private ArrayDeque<ByteBuf> more;
    private boolean complete;
    private int uncredited;
    /**
     * A whole body a retry may send again: the first attempt's own buffer, retained, and where its bytes are. The
     * first attempt sends the buffer itself, whose reader index its writer moves; a retry sends a view of the same
     * bytes by absolute index ({@link #forHead}), so no view is made for the usual request, which is sent once.
     */
    private ByteBuf kept;
    private int keptIndex;
    private int keptLength;
    private long sent;

    /** Empty again, for the next request of a reused exchange; call after {@link #release}. */
    void reset() {
        complete = false;
        uncredited = 0;
        sent = 0;
    }

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
        if (first == null) {
            first = piece; // most bodies come as one piece: no queue for them
        } else {
            if (more == null) {
                more = new ArrayDeque<>(4);
            }
            more.add(piece);
        }
    }

    /** Takes the oldest piece not yet sent, or null. */
    private ByteBuf poll() {
        ByteBuf p = first;
        first = more == null ? null : more.poll();
        return p;
    }

    /** Whether the body could be sent again whole: none of it was sent yet, a copy was kept, or it is empty. */
    boolean replayable(boolean attemptSent) {
        return !attemptSent || kept != null || (complete && first == null && sent == 0);
    }

    /** Whether the whole body goes with the head: it is complete and one small piece, or was kept, or is empty. */
    boolean wholeForHead() {
        return kept != null || complete && (first == null
                || (more == null || more.isEmpty()) && first.readableBytes() <= INLINE_LIMIT);
    }

    /**
     * What goes with the head: the whole body when {@link #wholeForHead()}, else nothing (the pieces follow by
     * {@link #pump}). {@code keep}: a retry may follow, so keep a copy of a whole body.
     */
    ByteBuf forHead(boolean keep) {
        if (kept != null) {
            return kept.retainedSlice(keptIndex, keptLength); // a retry resends the body kept from the first attempt
        }
        if (!wholeForHead() || first == null) {
            return Unpooled.EMPTY_BUFFER;
        }
        ByteBuf body = poll();
        if (keep) {
            kept = body.retain();
            keptIndex = body.readerIndex();
            keptLength = body.readableBytes();
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
        while ((c = first) != null && call.canSend()) {
            poll();
            boolean last = complete && first == null;
            int n = c.readableBytes();
            traffic.bytesIn(n);
            sent += n;
            if (!last) {
                uncredited += n; // credit for the last piece would be for bytes the downstream will never send
            }
            call.sendData(c, last);
        }
        return first == null;
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
        while ((c = poll()) != null) {
            c.release();
        }
        if (kept != null) {
            kept.release();
            kept = null;
        }
    }
}
