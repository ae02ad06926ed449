package dev.weft.dataplane.upstream;

import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.http.Decimals;
import dev.weft.dataplane.http.Http1Messages;
import dev.weft.dataplane.http.Http1ResponseDecoder;
import dev.weft.dataplane.http.Http1Writer;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.transport.StallTimer;
import dev.weft.protocol.WmpHeaders;
import dev.weft.registry.support.Durations;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;

import java.util.ArrayDeque;

/**
 * One pooled keep-alive HTTP/1.1 connection of {@link HttpUpstream} and, while a request runs on it, that request's
 * call: one at a time (HTTP/1.1). It writes the request, reads the answer and hands it to the exchange, and goes back
 * to its Worker's stack of idle connections once both directions are done cleanly; otherwise it closes.
 *
 * <p>Requests are written by {@link Http1Writer} (a whole small request as one buffer, head and body); answers are
 * read by {@link Http1ResponseDecoder}, whose strict rules make a malformed answer a 502 {@code app-protocol-error}
 * at once, with the connection closed, instead of a head relayed with a body that never comes.
 *
 * <p>Back-pressure: the answer's body is read from the upstream socket only while the caller has passed on (via
 * {@link UpstreamCall#consumed}) all but {@link #MAX_UNCONSUMED} bytes of it, so a slow caller slows the
 * upstream rather than filling memory.
 *
 * <p>Answer-body progress ({@code --body-timeout}, on the Worker's {@link StallTimer}): from the answer's head to its
 * end, a connection where no byte moves for that long (a pause this side made excepted) is closed and the call fails,
 * 504 {@code answer-timeout}, or, once its head was relayed, with the caller's answer cut; counted. Before the head,
 * the request's deadline governs.
 *
 * <p>Thread: its channel's loop, the Worker's that dialled it. Buffers: request bodies given to the call are written
 * (the write releases them), copied behind their head or framed as chunks by {@link Http1Writer} (which releases or
 * composes them); answer bodies read are handed to the listener, which owns them; the one piece held back until the
 * next message says whether it is the last is released here if the call ends first.
 */
final class Http1Connection extends ChannelInboundHandlerAdapter implements UpstreamCall {
    /** Under HttpUpstream's name, as before the connection had a file of its own: logging settings keep working. */
    private static final System.Logger LOG = System.getLogger(HttpUpstream.class.getName());
    static final int MAX_UNCONSUMED = 256 * 1024;

    private final HttpUpstream upstream;
    private final ArrayDeque<Http1Connection> pool;
    private final String address;
    private Channel channel;
    private Http1ResponseDecoder decoder;
    private UpstreamListener listener;
    private ResponseHead pendingHead;
    private boolean headDelivered;
    /** The latest answer piece, kept until the next message says whether the answer ends with it. */
    private ByteBuf heldPiece;
    /** The request's body goes as chunks (it had no Content-Length and did not come whole). */
    private boolean chunked;
    private boolean requestDone;
    private boolean responseDone;
    private boolean keepAlive;
    private int unconsumed;
    /** Times the answer's body, from its head to its end, on the Worker's timer. */
    private final StallTimer.Watch clock = new StallTimer.Watch(this::answerStalled);
    /** This connection as the connect step's result, for each request it carries after its first. */
    private Future<UpstreamCall> reused;

    Http1Connection(HttpUpstream upstream, ArrayDeque<Http1Connection> pool, String address) {
        this.upstream = upstream;
        this.pool = pool;
        this.address = address;
    }

    Channel channel() {
        return channel;
    }

    /** The next call on this idle connection: the connection is the call, so one completed future serves them all. */
    Future<UpstreamCall> reuse(UpstreamListener l) {
        begin(l);
        return reused;
    }

    Http1Connection begin(UpstreamListener l) {
        listener = l;
        pendingHead = null;
        headDelivered = false;
        chunked = false;
        requestDone = false;
        responseDone = false;
        keepAlive = true;
        unconsumed = 0;
        channel.config().setAutoRead(true);
        return this;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        decoder = ctx.pipeline().get(Http1ResponseDecoder.class);
        reused = channel.eventLoop().newSucceededFuture(this);
    }

    @Override
    public void sendHead(RequestHead in, String authority, String clientAddress, ByteBuf body, boolean endStream)
            throws ExchangeError {
        // The fields filtered for this hop, then this hop's own framing: a fixed length when the whole body is
        // here (cheaper for the upstream than chunks), the caller's Content-Length, or chunks. A retry's head
        // still carries the framing the previous attempt chose: it is chosen afresh.
        WmpHeaders fields = ProxyHeaders.forwardRequest(in, clientAddress).remove("transfer-encoding");
        if (endStream) {
            if (body.isReadable() || fields.contains("content-length")) {
                fields.set("content-length", Decimals.of(body.readableBytes()));
            }
        } else if (!fields.contains("content-length")) {
            fields.set("transfer-encoding", "chunked");
            chunked = true;
        }
        ByteBuf bytes;
        try {
            bytes = Http1Writer.request(channel.alloc(), in, authority, fields, endStream ? body : null);
        } catch (IllegalArgumentException e) {
            // A head that cannot be written as HTTP/1.1 (a peer's field with CR, LF or NUL...): nothing reaches
            // the app, and the connection stays clean for the next call.
            if (!endStream) {
                body.release();
            }
            listener = null;
            pool.addLast(this);
            throw new ExchangeError(400, "bad-request", "request refused before the " + upstream.description + ": "
                    + e.getMessage(), true);
        }
        decoder.expectHeadAnswer(in.isHead());
        if (endStream) {
            requestDone = true;
            channel.writeAndFlush(bytes, channel.voidPromise());
            releaseIfDone();
            return;
        }
        channel.write(bytes, channel.voidPromise());
        sendData(body, false);
    }

    @Override
    public void sendData(ByteBuf body, boolean endStream) {
        if (listener == null) {
            body.release();
            return;
        }
        clock.progressed(); // an app that answers as the request comes waits on the caller, not the reverse
        ByteBuf piece = chunked ? Http1Writer.chunk(channel.alloc(), body) : body;
        if (piece.isReadable()) {
            channel.write(piece, channel.voidPromise());
        } else {
            piece.release();
        }
        if (endStream) {
            requestDone = true;
            if (chunked) {
                channel.write(Http1Writer.lastChunk(), channel.voidPromise());
            }
            channel.flush();
            releaseIfDone();
        } else {
            channel.flush();
        }
    }

    @Override
    public boolean canSend() {
        return channel.isWritable();
    }

    @Override
    public void awaitWritable() {
        // channelWritabilityChanged below tells the listener.
    }

    @Override
    public void consumed(int bytes) {
        unconsumed -= bytes;
        if (unconsumed < MAX_UNCONSUMED && !channel.config().isAutoRead() && listener != null) {
            channel.config().setAutoRead(true);
            channel.read();
        }
    }

    @Override
    public void cancel() {
        // HTTP/1.1 cannot abandon one request and keep the connection: closing is what frees the upstream.
        listener = null;
        clock.time(channel, 0);
        if (heldPiece != null) {
            heldPiece.release();
            heldPiece = null;
        }
        channel.close();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        UpstreamListener l = listener;
        if (l == null || responseDone) {
            ReferenceCountUtil.release(msg);
            ctx.close(); // an answer nobody asked for: the connection's framing can no longer be trusted
            return;
        }
        if (msg instanceof ResponseHead h) {
            pendingHead = h;
            keepAlive = h.keepAlive();
            clock.time(ctx.channel(), upstream.answerTimeout.toNanos());
            // The app's answer, filtered for the next hop: hop-by-hop fields dropped, this hop added to Via.
            return;
        }
        if (msg instanceof Http1Messages.Rejected r) {
            // The app broke HTTP/1.1 (a bad Content-Length, a control byte in a field...): its answer cannot be
            // trusted, nor the connection; the caller is told at once instead of waiting for a timeout.
            upstream.protocolErrors.increment();
            if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
                LOG.log(System.Logger.Level.DEBUG, "weft: refused an answer from " + upstream.description + " at "
                        + address + " (" + r.kind() + "): " + r.message());
            }
            listener = null;
            ctx.close();
            l.onError(new ExchangeError(r.status(), r.kind(), upstream.description + " at " + address + " answered "
                    + "with a malformed message: " + r.message(), false));
            return;
        }
        if (msg != Http1Messages.END) {
            // Held until the next message says whether it is the last: a whole answer (a 503 to retry, the
            // usual small answer) then goes on as one piece with its end, in one frame.
            ByteBuf piece = (ByteBuf) msg;
            unconsumed += piece.readableBytes();
            if (heldPiece != null) {
                deliver(l, false); // the head (if not yet) with the previous piece: more follows it
            }
            heldPiece = piece;
            if (unconsumed >= MAX_UNCONSUMED) {
                ctx.channel().config().setAutoRead(false);
            }
            return;
        }
        responseDone = true;
        clock.time(ctx.channel(), 0);
        deliver(l, true);
        releaseIfDone();
    }

    /** The answer's body stopped coming for the answer timeout: the call fails, and the connection with it. */
    private void answerStalled() {
        UpstreamListener l = listener;
        if (l == null || responseDone || !channel.isActive()) {
            return;
        }
        upstream.answerTimeouts.increment();
        listener = null;
        channel.close();
        l.onError(new ExchangeError(504, "answer-timeout", upstream.description + " at " + address + " sent no byte of"
                + " its answer for " + Durations.format(upstream.answerTimeout) + " (expected the rest of the answer: the"
                + " limit weft sidecar --body-timeout sets)", false));
    }

    /** Passes on the head (if not yet) and the held piece ({@code end}: the answer is complete with it). */
    private void deliver(UpstreamListener l, boolean end) {
        ByteBuf piece = heldPiece != null ? heldPiece : Unpooled.EMPTY_BUFFER;
        heldPiece = null;
        if (!headDelivered) {
            headDelivered = true;
            ResponseHead h = pendingHead;
            pendingHead = null;
            l.onResponseHead(forwarded(h), piece, end);
        } else if (piece.isReadable() || end) {
            l.onResponseData(piece, end);
        }
    }

    /** The answer head with hop-by-hop fields dropped and this hop added to Via. */
    private static ResponseHead forwarded(ResponseHead h) {
        ProxyHeaders.forwardAnswer(h);
        return h;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        clock.progressed();
        // The read ended inside the answer: pass on what came (the head, the held piece) rather than wait.
        if (listener != null && !responseDone && (heldPiece != null || pendingHead != null && !headDelivered)) {
            deliver(listener, false);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (listener != null && ctx.channel().isWritable()) {
            listener.onWritable();
        }
    }

    /** Back to the pool once both directions finished cleanly; otherwise closed. */
    private void releaseIfDone() {
        if (!(requestDone && responseDone)) {
            return;
        }
        listener = null;
        if (keepAlive && channel.isActive()) {
            channel.config().setAutoRead(true);
            pool.addLast(this);
        } else {
            channel.close();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            if (listener == null) {
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        pool.remove(this);
        clock.time(ctx.channel(), 0); // the timer must not keep a closed connection reachable
        if (heldPiece != null) {
            heldPiece.release();
            heldPiece = null;
        }
        UpstreamListener l = listener;
        listener = null;
        if (l != null && !responseDone) {
            l.onReset(upstream.description + " at " + address + (headDelivered ? " closed the connection mid-answer"
                    : " closed the connection before answering"), false);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
