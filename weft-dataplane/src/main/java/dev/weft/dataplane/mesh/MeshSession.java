package dev.weft.dataplane.mesh;

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
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
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
 * <p>Thread: everything runs on the channel's Worker event loop; no field is touched from another thread, which is
 * why there are no locks. Buffers: frames read from the decoder are owned here until handed to a stream's
 * listener; frames written are released by the encoder.
 */
public final class MeshSession extends ChannelInboundHandlerAdapter {
    /** A PING after this long with nothing read; the connection is closed after three such periods (30 s). */
    static final int HEARTBEAT_SECONDS = 10;
    private static final int SILENT_PERIODS_BEFORE_CLOSE = 3;

    /** Accepting side: called for each new stream; returns who will receive the rest of the stream. */
    public interface Acceptor {
        MeshStream.Listener accept(MeshStream stream, WmpRequest request);
    }

    private final IntObjectMap<MeshStream> streams = new IntObjectHashMap<>();
    private final Set<MeshStream> awaitingWritable = new LinkedHashSet<>();
    private final Acceptor acceptor;
    private final String peer;
    private Channel channel;
    private int nextStreamId = 1;
    private int lastAcceptedStreamId;
    private boolean goingAway;
    private long pingPayload;
    /** Heartbeat periods in a row with nothing read; reset by any frame. */
    private int silentPeriods;

    public MeshSession(Acceptor acceptor, String peer) {
        this.acceptor = acceptor;
        this.peer = peer;
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

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    /** Opens a stream on the dialling side. Stream ids are never reused on a connection. */
    public MeshStream openStream() {
        MeshStream s = new MeshStream(this, nextStreamId);
        nextStreamId += 2;
        streams.put(s.id(), s);
        return s;
    }

    void write(WmpFrame frame) {
        channel.writeAndFlush(frame, channel.voidPromise());
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
        switch (frame) {
            case WmpRequest req -> onRequest(req);
            case WmpResponse resp -> {
                MeshStream s = streams.get(resp.streamId());
                if (s == null) {
                    resp.release(); // a cancelled stream's late answer
                } else {
                    s.onHead(resp, resp.endStream());
                }
            }
            case WmpData data -> {
                MeshStream s = streams.get(data.streamId());
                if (s == null) {
                    data.release();
                } else {
                    s.onData(data);
                }
            }
            case WmpWindowUpdate wu -> {
                MeshStream s = streams.get(wu.streamId());
                if (s != null) {
                    s.onWindowUpdate(wu.increment());
                }
            }
            case WmpCancel c -> {
                MeshStream s = streams.remove(c.streamId());
                if (s != null) {
                    awaitingWritable.remove(s);
                    s.onReset("stream cancelled by peer " + peer + " (" + c.error() + ")",
                            c.error() == WmpError.REFUSED_STREAM);
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
        if (acceptor == null || goingAway || req.streamId() <= lastAcceptedStreamId || (req.streamId() & 1) == 0) {
            // Refused before any work started: the opening side may safely retry it elsewhere.
            int id = req.streamId();
            req.release();
            write(new WmpCancel(id, WmpError.REFUSED_STREAM));
            return;
        }
        lastAcceptedStreamId = req.streamId();
        MeshStream s = new MeshStream(this, req.streamId());
        streams.put(s.id(), s);
        s.markReceivedEnd(req.endStream());
        MeshStream.Listener l = acceptor.accept(s, req);
        s.listener(l);
        s.checkDone();
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
