package dev.weft.dataplane.mesh;

import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpWindowUpdate;
import io.netty.buffer.ByteBuf;

/**
 * One exchange on a multiplexed WMP connection, on either side (the sidecar that opened it or the one that
 * accepted it). It does the per-stream flow control of docs/protocol.md: a sender may have at most
 * {@link #INITIAL_WINDOW} body bytes outstanding, and the receiver grants more with WINDOW_UPDATE only once it has
 * passed the bytes on. That bounds the memory a slow reader can pin, per stream, on both sidecars, so a 1 GiB body
 * crosses with a constant footprint and never stalls the other streams sharing the connection.
 *
 * <p>Thread: the connection's Worker event loop only. Buffers: {@link #sendData} takes ownership of its buffer
 * (the encoder releases it after writing); frames handed to the {@link Listener} are owned by the listener.
 */
public final class MeshStream {
    public static final int INITIAL_WINDOW = 256 * 1024;

    /** Receives what the peer sends on this stream. Every method runs on the connection's loop. */
    public interface Listener {
        /** The answer's head (a RESPONSE on the opening side). Owns the frame. */
        default void onHead(WmpFrame head) {
            head.release();
        }

        /** A body chunk. Owns the frame; call {@link MeshStream#consumed} once its bytes are passed on. */
        void onData(WmpData data);

        /** The send window or the connection became writable again: resume reading the source. */
        void onWritable();

        /**
         * The stream ended abnormally: cancelled by the peer, connection lost, or refused by a draining peer.
         * {@code refused} means the peer never started work on it, so it is safe to try elsewhere.
         */
        void onReset(String reason, boolean refused);
    }

    private final MeshSession session;
    private final int id;
    private Listener listener;
    private int sendWindow = INITIAL_WINDOW;
    private int unacknowledged;
    private boolean sentEnd;
    private boolean receivedEnd;
    private boolean closed;

    MeshStream(MeshSession session, int id) {
        this.session = session;
        this.id = id;
    }

    public int id() {
        return id;
    }

    public MeshSession session() {
        return session;
    }

    public void listener(Listener listener) {
        this.listener = listener;
    }

    Listener listener() {
        return listener;
    }

    /** Writes the opening frame (REQUEST, or RESPONSE on the accepting side); ownership of its body moves too. */
    public void sendHead(WmpFrame head, int bodyBytes, boolean endStream) {
        sendWindow -= bodyBytes;
        sentEnd |= endStream;
        session.write(head);
        closeIfDone();
    }

    /** Writes a body chunk; takes ownership of {@code body}. */
    public void sendData(ByteBuf body, boolean endStream) {
        sendWindow -= body.readableBytes();
        sentEnd |= endStream;
        session.write(new WmpData(id, endStream, body));
        closeIfDone();
    }

    /** Whether the source may be read further: credit left and the socket not backed up. */
    public boolean canSend() {
        return sendWindow > 0 && session.isWritable();
    }

    /** Asks to be told via {@link Listener#onWritable()} when {@link #canSend()} may have become true. */
    public void awaitWritable() {
        session.awaitWritable(this);
    }

    /** The receiver passed {@code bytes} of this stream's body on: grant the peer that much more credit. */
    public void consumed(int bytes) {
        if (closed || receivedEnd) {
            return; // the peer sends nothing more on this stream, so credit would be wasted bytes
        }
        unacknowledged += bytes;
        // Batch the grants: one WINDOW_UPDATE per half window rather than per chunk.
        if (unacknowledged >= INITIAL_WINDOW / 2) {
            session.write(new WmpWindowUpdate(id, unacknowledged));
            unacknowledged = 0;
        }
    }

    /** Abandons the stream and tells the peer, which frees the upstream's slot at once. */
    public void cancel(WmpError error) {
        if (closed) {
            return;
        }
        closed = true;
        session.write(new WmpCancel(id, error));
        session.removeStream(this);
    }

    public boolean isClosed() {
        return closed;
    }

    /** Whether the increment would grow the send window past 2^31-1, which docs/protocol.md makes a stream error. */
    boolean windowWouldOverflow(int increment) {
        return (long) sendWindow + increment > Integer.MAX_VALUE;
    }

    void onWindowUpdate(int increment) {
        boolean wasBlocked = sendWindow <= 0;
        sendWindow += increment;
        if (wasBlocked && sendWindow > 0 && listener != null) {
            listener.onWritable();
        }
    }

    void onData(WmpData data) {
        receivedEnd |= data.endStream();
        if (listener == null) {
            data.release();
        } else {
            listener.onData(data);
        }
        closeIfDone();
    }

    void onHead(WmpFrame head, boolean endStream) {
        receivedEnd |= endStream;
        if (listener == null) {
            head.release();
        } else {
            listener.onHead(head);
        }
        closeIfDone();
    }

    void markReceivedEnd(boolean end) {
        receivedEnd |= end;
    }

    /** Whether the peer's half has ended (END_STREAM received). */
    boolean receivedEnd() {
        return receivedEnd;
    }

    /** A stream error found here: tells the peer ({@code error}) and the listener, which stops the work. */
    void reset(WmpError error, String reason) {
        cancel(error);
        if (listener != null) {
            listener.onReset(reason, false);
        }
    }

    void onReset(String reason, boolean refused) {
        if (closed) {
            return;
        }
        closed = true;
        if (listener != null) {
            listener.onReset(reason, refused);
        }
    }

    void checkDone() {
        closeIfDone();
    }

    private void closeIfDone() {
        if (!closed && sentEnd && receivedEnd) {
            closed = true;
            session.removeStream(this);
        }
    }
}
