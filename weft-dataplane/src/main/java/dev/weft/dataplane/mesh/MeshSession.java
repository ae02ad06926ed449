package dev.weft.dataplane.mesh;

import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpPing;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.protocol.WmpWindowUpdate;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelPromise;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One WMP connection between two sidecars, multiplexing many {@link MeshStream}s. The side that dialled opens
 * streams ({@link #openStream()}, odd ids); the side that accepted gets them through its {@link Acceptor}.
 * It also answers PINGs, sends one when the connection is idle (so a dead peer is noticed), and honours GOAWAY.
 *
 * <p>It enforces the stream rules of docs/protocol.md ("Streams"): a REQUEST with an even id, an id not above the
 * previous one, a second REQUEST on an open stream, a REQUEST sent to the side that dialled, or any other frame for a
 * stream id that was never opened is a connection error. Such a peer's view of the streams differs from ours, so no
 * later frame can be trusted: one GOAWAY {@code PROTOCOL_ERROR} with the last stream processed here goes out, the
 * connection closes, everything read after it is dropped, and {@code weft_rejected_total{boundary="wmp_connection"}}
 * counts it. Frames for a stream that was opened and has closed are late, not wrong: they are dropped quietly. DATA
 * on a stream whose peer half has ended (END_STREAM came) is a stream error: that stream is reset
 * ({@code CANCEL PROTOCOL_ERROR}, counted as {@code data_after_end}) and the connection carries on.
 *
 * <p>Thread: everything runs on the channel's Worker event loop; no field is touched from another thread, which is
 * why there are no locks. Buffers: frames read from the decoder are owned here until handed to a stream's
 * listener; frames written are released by the encoder.
 */
public final class MeshSession extends ChannelDuplexHandler {
    /** A PING after this long with nothing read; the connection is closed after three such periods (30 s). */
    static final int HEARTBEAT_SECONDS = 10;
    private static final int SILENT_PERIODS_BEFORE_CLOSE = 3;

    /** Accepting side: called for each new stream; returns who will receive the rest of the stream. */
    public interface Acceptor {
        MeshStream.Listener accept(MeshStream stream, WmpRequest request);
    }

    /** Frames written and not flushed yet; see {@link #write}. */
    static final int FLUSH_AFTER_FRAMES = 64;
    /** Whether {@link #write} defers flushes: the pipeline has {@link #flushConsolidation()} (every real one does). */
    private boolean consolidates;
    private int unflushed;
    private boolean flushQueued;
    private final Runnable flushTask = this::runQueuedFlush;

    private final IntObjectMap<MeshStream> streams = new IntObjectHashMap<>();
    private final Set<MeshStream> awaitingWritable = new LinkedHashSet<>();
    private final Acceptor acceptor;
    private final String peer;
    private final Rejections rejected;
    private Channel channel;
    private int nextStreamId = 1;
    private int lastAcceptedStreamId;
    /** Accepting side: the highest id the peer opened, refused streams included; any id above it was never opened. */
    private int highestPeerStreamId;
    /** A connection error was found: the GOAWAY is on its way and every frame read from now on is dropped. */
    private boolean failed;
    private boolean goingAway;
    private long pingPayload;
    /** Heartbeat periods in a row with nothing read; reset by any frame. */
    private int silentPeriods;

    /** Counts stream-rule violations in a counter of its own, which nothing reads (for tests that do not look). */
    public MeshSession(Acceptor acceptor, String peer) {
        this(acceptor, peer, new Rejections());
    }

    /** @param rejected where stream-rule violations are counted (the sidecar's {@code weft_rejected_total}) */
    public MeshSession(Acceptor acceptor, String peer, Rejections rejected) {
        this.acceptor = acceptor;
        this.peer = peer;
        this.rejected = rejected;
    }

    public String peer() {
        return peer;
    }

    public Channel channel() {
        return channel;
    }

    public int activeStreams() {
        return streams.size();
    }

    /** Usable for new streams: open and neither side has announced a drain. */
    public boolean isUsable() {
        return channel != null && channel.isActive() && !goingAway && nextStreamId > 0;
    }

    /**
     * The flush consolidation a WMP connection's pipeline carries below its codec, as {@code MeshPool} and
     * {@code InboundServer} install it: it gathers the flushes made during a read, up to one per read, and leaves
     * those made outside a read to this session, which consolidates them itself (see {@link #write}) without the
     * task object per flush that Netty's handler would make for them.
     */
    public static FlushConsolidationHandler flushConsolidation() {
        return new FlushConsolidationHandler(FLUSH_AFTER_FRAMES, false);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        // Without a consolidating handler (a pipeline made by hand, as in some tests) every frame is flushed as it
        // is written: nothing would gather the flushes made during a read.
        consolidates = ctx.pipeline().get(FlushConsolidationHandler.class) != null;
    }

    /** Opens a stream on the dialling side. Stream ids are never reused on a connection. */
    public MeshStream openStream() {
        MeshStream s = new MeshStream(this, nextStreamId);
        nextStreamId += 2;
        streams.put(s.id(), s);
        return s;
    }

    /**
     * Writes a frame; it is flushed once the loop has run what it is running now (or at once after
     * {@link #FLUSH_AFTER_FRAMES}), so a burst of streams' frames costs one flush. One task object per connection,
     * queued at most once at a time, where Netty's {@code FlushConsolidationHandler} submitted a new one per flush.
     */
    void write(WmpFrame frame) {
        if (!consolidates || !channel.eventLoop().inEventLoop()) {
            channel.writeAndFlush(frame, channel.voidPromise()); // the counters below are the loop's own
            return;
        }
        channel.write(frame, channel.voidPromise());
        if (++unflushed >= FLUSH_AFTER_FRAMES) {
            flushNow();
        } else if (!flushQueued) {
            flushQueued = true;
            channel.eventLoop().execute(flushTask);
        }
    }

    private void runQueuedFlush() {
        flushQueued = false;
        flushNow();
    }

    private void flushNow() {
        if (unflushed > 0) {
            unflushed = 0;
            channel.flush();
        }
    }

    /** A close from anywhere goes out after the frames written before it (a drained stream's last frame). */
    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        flushNow();
        ctx.close(promise);
    }

    boolean isWritable() {
        return channel.isWritable();
    }

    void awaitWritable(MeshStream s) {
        awaitingWritable.add(s);
    }

    void removeStream(MeshStream s) {
        streams.remove(s.id());
        awaitingWritable.remove(s);
        if (goingAway && streams.isEmpty() && acceptor == null) {
            channel.close(); // drained: the last stream of a connection the peer asked us to leave
        }
    }

    /** Announces a drain: the peer opens no new stream here; streams in progress finish. */
    public void goAway(String reason) {
        if (!goingAway) {
            goingAway = true;
            write(new WmpGoAway(lastAcceptedStreamId, WmpError.NO_ERROR, reason));
        }
    }

    /**
     * The idle detector to put before this handler: it fires once per {@link #HEARTBEAT_SECONDS} without a read. Only
     * reads are watched, not writes: watching writes makes Netty replace every write's void promise with a real one
     * (an object and a listener per frame), and a peer that reads our frames answers at least our PINGs, so silence
     * on the read side is what says it is gone.
     */
    public static IdleStateHandler heartbeat() {
        return new IdleStateHandler(HEARTBEAT_SECONDS, 0, 0, TimeUnit.SECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        silentPeriods = 0;
        if (!(msg instanceof WmpFrame frame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (failed) {
            frame.release(); // read after our GOAWAY PROTOCOL_ERROR: nothing from this peer is trusted any more
            return;
        }
        switch (frame) {
            case WmpRequest req -> onRequest(req);
            case WmpResponse resp -> {
                MeshStream s = streams.get(resp.streamId());
                if (s == null) {
                    resp.release(); // a cancelled stream's late answer, or an answer to nothing
                    checkOpened(resp.streamId(), "RESPONSE");
                } else {
                    s.onHead(resp, resp.endStream());
                }
            }
            case WmpData data -> {
                MeshStream s = streams.get(data.streamId());
                if (s == null) {
                    data.release();
                    checkOpened(data.streamId(), "DATA");
                } else if (s.receivedEnd()) {
                    // Passed on, these bytes would reach the app (or the caller) after a request (or an answer) it
                    // already has whole: the start of another one, of the peer's making. A stream error.
                    data.release();
                    rejected.increment(Reason.DATA_AFTER_END);
                    s.reset(WmpError.PROTOCOL_ERROR, "DATA after END_STREAM on stream " + s.id() + " from " + peer);
                } else {
                    s.onData(data);
                }
            }
            case WmpWindowUpdate wu -> {
                MeshStream s = streams.get(wu.streamId());
                if (s != null && s.windowWouldOverflow(wu.increment())) {
                    rejected.increment(Reason.FLOW_CONTROL);
                    s.reset(WmpError.FLOW_CONTROL_ERROR, "WINDOW_UPDATE past 2^31-1 on stream " + s.id() + " from "
                            + peer);
                } else if (s != null) {
                    s.onWindowUpdate(wu.increment());
                } else if (wu.streamId() != 0) { // stream 0, the connection's window, is valid and unused in v1
                    checkOpened(wu.streamId(), "WINDOW_UPDATE");
                }
            }
            case WmpCancel c -> {
                MeshStream s = streams.remove(c.streamId());
                if (s != null) {
                    awaitingWritable.remove(s);
                    s.onReset("stream cancelled by peer " + peer + " (" + c.error() + ")",
                            c.error() == WmpError.REFUSED_STREAM);
                } else {
                    checkOpened(c.streamId(), "CANCEL");
                }
            }
            case WmpPing ping -> {
                if (!ping.ack()) {
                    write(new WmpPing(ping.payload(), true));
                }
            }
            case WmpGoAway ga -> onGoAway(ga);
        }
    }

    private void onRequest(WmpRequest req) {
        int id = req.streamId();
        if (acceptor == null || (id & 1) == 0 || id <= highestPeerStreamId) {
            req.release();
            if (acceptor != null && streams.containsKey(id)) {
                protocolError(Reason.SECOND_REQUEST, "a second REQUEST on open stream " + id);
            } else {
                protocolError(Reason.STREAM_ID, "REQUEST on stream " + id + (acceptor == null
                        ? " (expected none: only the side that dialled opens streams)"
                        : " (expected an odd id above " + highestPeerStreamId + ")"));
            }
            return;
        }
        highestPeerStreamId = id;
        if (goingAway) {
            // Refused before any work started: the opening side may safely retry it elsewhere.
            req.release();
            write(new WmpCancel(id, WmpError.REFUSED_STREAM));
            return;
        }
        lastAcceptedStreamId = id;
        MeshStream s = new MeshStream(this, req.streamId());
        streams.put(s.id(), s);
        s.markReceivedEnd(req.endStream());
        MeshStream.Listener l = acceptor.accept(s, req);
        s.listener(l);
        s.checkDone();
    }

    /** A frame for stream {@code id}, which has no state here: late if the stream was opened once, else an error. */
    private void checkOpened(int id, String type) {
        boolean opened = (id & 1) == 1 && (acceptor != null ? id <= highestPeerStreamId : id < nextStreamId);
        if (!opened) {
            protocolError(Reason.UNOPENED_STREAM, type + " on stream " + id + ", which was never opened");
        }
    }

    /**
     * A connection error (docs/protocol.md, "Error handling"): one GOAWAY {@code PROTOCOL_ERROR} naming the last
     * stream processed here (0 on the dialling side, which processes none), then close once it is flushed.
     */
    private void protocolError(Reason reason, String debug) {
        failed = true;
        goingAway = true;
        rejected.increment(reason);
        int last = acceptor != null ? lastAcceptedStreamId : 0;
        channel.writeAndFlush(new WmpGoAway(last, WmpError.PROTOCOL_ERROR, debug)).addListener(ChannelFutureListener.CLOSE);
    }

    private void onGoAway(WmpGoAway ga) {
        goingAway = true;
        // Streams above the peer's last id were never seen by it: refuse them so callers retry elsewhere.
        List<MeshStream> refused = new ArrayList<>();
        for (MeshStream s : streams.values()) {
            if (acceptor == null && s.id() > ga.lastStreamId()) {
                refused.add(s);
            }
        }
        for (MeshStream s : refused) {
            streams.remove(s.id());
            s.onReset("peer " + peer + " is draining (" + ga.debug() + ")", true);
        }
        if (streams.isEmpty() && acceptor == null) {
            channel.close();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && !awaitingWritable.isEmpty()) {
            List<MeshStream> ready = new ArrayList<>(awaitingWritable);
            awaitingWritable.clear();
            for (MeshStream s : ready) {
                if (!s.isClosed() && s.listener() != null) {
                    s.listener().onWritable();
                }
            }
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent e && e.state() == IdleState.READER_IDLE) {
            if (++silentPeriods >= SILENT_PERIODS_BEFORE_CLOSE) {
                // Our PINGs went unanswered for three periods: the peer is gone even if TCP has not noticed.
                ctx.close();
            } else {
                write(new WmpPing(++pingPayload, false)); // the peer's PONG (or anything else) resets the count
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        List<MeshStream> open = new ArrayList<>(streams.values());
        streams.clear();
        awaitingWritable.clear();
        for (MeshStream s : open) {
            s.onReset("connection to " + peer + " closed", false);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // I/O errors (reset by peer) end the connection; channelInactive then resets its streams.
        ctx.close();
    }
}
