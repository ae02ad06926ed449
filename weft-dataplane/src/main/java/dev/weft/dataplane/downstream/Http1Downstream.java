package dev.weft.dataplane.downstream;

import dev.weft.dataplane.exchange.Downstream;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.PolicyStack;
import dev.weft.dataplane.exchange.ProxyExchange;
import dev.weft.dataplane.http.Decimals;
import dev.weft.dataplane.http.Http1Messages;
import dev.weft.dataplane.http.Http1RequestDecoder;
import dev.weft.dataplane.http.Http1Writer;
import dev.weft.dataplane.http.HttpErrors;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.transport.ConnectionTimeouts;
import dev.weft.dataplane.transport.StallTimer;
import dev.weft.protocol.WmpHeaders;
import dev.weft.registry.support.Durations;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;

/**
 * An HTTP/1.1 connection as the {@link Downstream} of its exchanges: the app's calls on a consumer-side sidecar, or a
 * peer's on a provider-side sidecar reached with {@code --mesh-protocol http1}. It reads what the HTTP/1.1 decoder
 * passes up ({@link Http1Messages}: a head, body pieces, END, or a rejection), opens an exchange on the listener's
 * {@link PolicyStack} per request, and writes the answers. Everything the exchange decides is in the exchange.
 *
 * <p>HTTP/1.1 answers go back in request order, so one exchange runs at a time per connection; pipelined requests
 * wait in {@code backlog}, and reading stops while they do, which bounds memory. A head is held until the next piece
 * of its body (or the end of the read) so that a small request starts with its whole body and crosses the mesh as
 * one frame: the decoder passes head, body and END as separate messages even when they came in one packet.
 *
 * <p>Answers are written as bytes by {@link Http1Writer}: a whole small answer is one buffer, head and body; a
 * streamed one its head, then its pieces (as chunks when it has no Content-Length). The writer refuses any field
 * with CR, LF or NUL, so nothing from a peer can inject a header line into the client's answer.
 *
 * <p>Two of the connection's timeouts are kept here ({@link ConnectionTimeouts}; the request head's is the decoder's), on
 * the Worker's {@link StallTimer}: while a request body is coming, the longest wait for its next byte
 * ({@code --body-timeout}: 408 {@code body-timeout}, what went upstream is cancelled, the connection closed); between
 * requests, the longest wait for the next one ({@code --idle-timeout}: closed quietly, since the client asked nothing).
 * While an answer is awaited or written nothing is timed here: a slow app is the deadline's business, and a slow
 * answer body the upstream's. A wait this side caused (reading paused by back-pressure) never counts. Each read costs
 * an int increment; each change of phase a few field writes.
 *
 * <p>Thread: the connection's Worker event loop only. Buffers: body pieces from the decoder are owned here until
 * given to the exchange ({@link ProxyExchange#onRequestBody}) or released; answer bodies given by the exchange are
 * owned here until written (the write releases them, or {@link Http1Writer} copies or composes and releases them).
 */
public final class Http1Downstream extends ChannelInboundHandlerAdapter implements Downstream {
    private static final System.Logger LOG = System.getLogger(Http1Downstream.class.getName());
    private final PolicyStack stack;
    private final boolean addClientAddress;
    private final ArrayDeque<Object> backlog = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    private String peer;
    private String clientAddress;

    /** The request being read, head held until its first body piece or the end of the read. */
    private RequestHead held;
    /** The latest body piece, kept back until the next message says whether it is the last. */
    private ByteBuf heldPiece;
    /** The exchange of the request being read or answered; null between requests and once it is done. */
    private ProxyExchange current;
    /** A request's head was read and its END not yet: what arrives belongs to it. */
    private boolean inRequest;
    private boolean keepAlive;
    /** The answer being written goes as chunks (it had no Content-Length and did not come whole). */
    private boolean chunkedAnswer;
    private boolean closing;

    private final long idleTimeoutNanos;
    private final long bodyTimeoutNanos;
    private final Duration bodyTimeout;
    /** The idle and body timeouts' clock, linked to the Worker's timer while it runs. */
    private final StallTimer.Watch clock = new StallTimer.Watch(this::stalled);
    /** The decoder before this handler, asked whether a head has begun; null without one (tests). */
    private Http1RequestDecoder decoder;

    /** A downstream with no idle or body timeout. */
    public Http1Downstream(PolicyStack stack, boolean addClientAddress) {
        this(stack, addClientAddress, ConnectionTimeouts.NONE);
    }

    /**
     * @param addClientAddress append the downstream's address to X-Forwarded-For: true where the downstream is the
     *                         original client, false on the mesh's second hop (the first hop already added it)
     * @param timeouts         the idle and body timeouts are kept here (the head's is the decoder's)
     */
    public Http1Downstream(PolicyStack stack, boolean addClientAddress, ConnectionTimeouts timeouts) {
        this.stack = stack;
        this.addClientAddress = addClientAddress;
        this.idleTimeoutNanos = timeouts.idle().toNanos();
        this.bodyTimeout = timeouts.body();
        this.bodyTimeoutNanos = bodyTimeout.toNanos();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
            peer = a.getAddress().getHostAddress() + ":" + a.getPort();
            if (addClientAddress) {
                clientAddress = a.getAddress().getHostAddress();
            }
        }
        decoder = ctx.pipeline().get(Http1RequestDecoder.class);
        retime(); // a new connection is idle until its first request
    }

    @Override
    public EventLoop loop() {
        return ctx.channel().eventLoop();
    }

    /** A whole request is read and its answer not yet done: what comes next is a pipelined request. */
    private boolean answering() {
        return current != null && !inRequest;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (closing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (answering() || !backlog.isEmpty()) {
            backlog.add(msg); // a pipelined request: its turn comes when the current answer is done
            ctx.channel().config().setAutoRead(false);
            return;
        }
        dispatch(msg);
    }

    private void dispatch(Object msg) {
        if (msg instanceof RequestHead h) {
            inRequest = true;
            keepAlive = h.keepAlive();
            held = h;
            if (h.expectContinue()) {
                // The client waits for this before it sends its body.
                ctx.writeAndFlush(Unpooled.wrappedBuffer(CONTINUE), ctx.voidPromise());
            }
        } else if (msg instanceof ByteBuf piece) {
            if (!inRequest) {
                piece.release();
                return;
            }
            if (held != null) {
                if (heldPiece == null) {
                    heldPiece = piece; // hold head and first piece together: END may follow in this read
                    return;
                }
                open();
            }
            if (current == null) {
                piece.release(); // the rest of a request already answered
                return;
            }
            passHeldPiece(false);
            heldPiece = piece;
        } else if (msg == Http1Messages.END) {
            if (!inRequest) {
                return;
            }
            inRequest = false;
            if (held != null) {
                open(); // with the whole body in hand
            } else if (current != null) {
                passHeldPiece(true);
            } else {
                releaseHeldPiece();
                next();
            }
        } else if (msg instanceof Http1Messages.Rejected r) {
            reject(r);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        // The body did not all come with the head: start without waiting for it (slow clients, 100-continue).
        if (held != null && !closing) {
            open();
        }
        retime(); // bytes came: progress, and perhaps a new phase
        ctx.fireChannelReadComplete();
    }

    /**
     * Times what the connection waits for now: the request body's next byte while one is coming, the next request
     * while none is in progress; nothing while an answer is awaited or written, or once closing. Starts the clock
     * again, so it is called where something happened: a read, the end of an answer.
     */
    private void retime() {
        long t = closing ? 0 : inRequest ? bodyTimeoutNanos : current == null && backlog.isEmpty() ? idleTimeoutNanos : 0;
        clock.time(ctx.channel(), t);
    }

    /** The clock ran out: the request body stopped coming, or no request came. */
    private void stalled() {
        if (closing || !ctx.channel().isActive()) {
            return;
        }
        if (!inRequest && (answering() || !backlog.isEmpty() || decoder != null && decoder.readingHead())) {
            retime(); // not idle: an answer is due, or a head has begun (the request-head timeout governs it)
            return;
        }
        closing = true;
        if (!inRequest) {
            stack.metrics().idleConnectionsClosed.increment();
            ctx.channel().close(); // the client asked nothing, so nothing is answered
            return;
        }
        stack.metrics().bodyTimeouts.increment();
        ProxyExchange x = current;
        current = null;
        if (x == null) {
            ctx.channel().close(); // already answered (refused early); the rest of its body was being dropped
            return;
        }
        boolean started = x.relayed();
        // Cancels what went upstream (the app sees its request end); recorded as what the client is told.
        x.abort(408, "body-timeout");
        if (started) {
            ctx.channel().close(); // an answer is under way: no other can follow it
            return;
        }
        ExchangeError e = new ExchangeError(408, "body-timeout", "no byte of the request body arrived for "
                + Durations.format(bodyTimeout) + " (expected the body to keep coming: the limit weft sidecar"
                + " --body-timeout sets)", false);
        ctx.channel().config().setAutoRead(false);
        ctx.writeAndFlush(errorBytes(e, true)).addListener(ChannelFutureListener.CLOSE);
    }

    /** Opens the exchange for the held head and gives it what body came with it. */
    private void open() {
        RequestHead h = held;
        held = null;
        ProxyExchange x = stack.open(this, h, peer, clientAddress);
        current = x;
        if (heldPiece != null || !inRequest) {
            passHeldPiece(!inRequest);
        }
        x.carry(); // a phase may answer at once: done() then runs before this returns
    }

    /** Gives the held body piece to the exchange ({@code end}: it is the last, or END came with no piece). */
    private void passHeldPiece(boolean end) {
        ByteBuf p = heldPiece;
        heldPiece = null;
        if (current == null) {
            if (p != null) {
                p.release();
            }
            return;
        }
        current.onRequestBody(p != null ? p : Unpooled.EMPTY_BUFFER, end);
    }

    private void releaseHeldPiece() {
        if (heldPiece != null) {
            heldPiece.release();
            heldPiece = null;
        }
    }

    /** A head the decoder refused: answered, counted, and the connection closed (its framing cannot be trusted). */
    private void reject(Http1Messages.Rejected r) {
        SidecarMetrics m = stack.metrics();
        switch (r.kind()) {
            case "headers-too-large" -> m.headersTooLarge.increment();
            case "conflicting-framing" -> m.smuggling.increment();
            case "request-timeout" -> m.requestHeadTimeouts.increment();
            default -> m.badRequests.increment();
        }
        ExchangeError e = new ExchangeError(r.status(), r.kind(), r.message(), false);
        if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
            LOG.log(System.Logger.Level.DEBUG, "weft: refused a request from " + peer + " (" + r.status() + " "
                    + r.kind() + "): " + r.message());
        }
        stack.refused(e);
        releaseHeldPiece();
        held = null;
        closing = true;
        if (current != null) {
            // The body of a request already under way broke its framing: stop it upstream. An answer already
            // started cannot be followed by ours.
            ProxyExchange x = current;
            current = null;
            boolean started = x.relayed();
            x.abort(400, "bad-request"); // the body broke its framing
            if (started) {
                ctx.channel().close();
                return;
            }
        }
        ctx.channel().config().setAutoRead(false);
        ctx.writeAndFlush(errorBytes(e, true)).addListener(ChannelFutureListener.CLOSE);
    }

    // ---- Downstream: what the exchange tells this connection ----

    @Override
    public void answer(ProxyExchange x, ResponseHead head, ByteBuf body, boolean end) {
        WmpHeaders f = head.fields();
        chunkedAnswer = false;
        if (f.get("content-length") == null) {
            if (end) {
                f.set("content-length", Decimals.of(body.readableBytes()));
            } else {
                f.set("transfer-encoding", "chunked");
                chunkedAnswer = true;
            }
        }
        if (!keepAlive) {
            f.set("connection", "close");
        }
        ByteBuf bytes;
        try {
            // The usual answer, complete and small, is one buffer and one write, head and body.
            bytes = Http1Writer.response(ctx.alloc(), head, end ? body : null);
        } catch (IllegalArgumentException e) {
            // A field that cannot be written as HTTP/1.1 (from a peer): the client gets a clear error, not a
            // header line injected into its answer.
            if (!end) {
                body.release();
            }
            ctx.writeAndFlush(errorBytes(new ExchangeError(502, "upstream-protocol-error",
                    "the answer could not be relayed: " + e.getMessage(), false), true), ctx.voidPromise());
            abortAnswer(x);
            return;
        }
        if (end) {
            ctx.writeAndFlush(bytes, ctx.voidPromise());
            return;
        }
        ctx.write(bytes, ctx.voidPromise());
        writeBody(x, body, false);
    }

    @Override
    public void answerData(ProxyExchange x, ByteBuf body, boolean end) {
        writeBody(x, body, end);
    }

    /** Writes an answer body piece (as a chunk when the answer is chunked); the upstream gets credit once it is written. */
    private void writeBody(ProxyExchange x, ByteBuf body, boolean end) {
        int n = body.readableBytes();
        ByteBuf piece = chunkedAnswer ? Http1Writer.chunk(ctx.alloc(), body) : body;
        if (end) {
            if (piece.isReadable()) {
                ctx.write(piece, ctx.voidPromise());
            } else {
                piece.release();
            }
            ctx.writeAndFlush(chunkedAnswer ? Http1Writer.lastChunk() : Unpooled.EMPTY_BUFFER, ctx.voidPromise());
        } else if (n > 0) {
            ctx.writeAndFlush(piece).addListener(f -> {
                if (f.isSuccess()) {
                    x.answerConsumed(n);
                }
            });
        } else {
            piece.release();
        }
    }

    @Override
    public void answerError(ProxyExchange x, ExchangeError error, boolean skipRest) {
        boolean close = !skipRest || !keepAlive;
        ctx.writeAndFlush(HttpErrors.answer(ctx.alloc(), error, close, x.head().isHead()))
                .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    /** The mesh's own answer as bytes: a one-line text body, {@code x-weft-error}, and what else the error says. */
    private ByteBuf errorBytes(ExchangeError e, boolean close) {
        return HttpErrors.answer(ctx.alloc(), e, close, false);
    }

    @Override
    public void abortAnswer(ProxyExchange x) {
        closing = true;
        ctx.flush();
        ctx.channel().close(); // HTTP/1.1 can only signal a truncated answer by closing
    }

    @Override
    public void pauseRequest() {
        ctx.channel().config().setAutoRead(false);
    }

    @Override
    public void requestConsumed(int bytes) {
        if (inRequest && !closing) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        }
    }

    @Override
    public void done(ProxyExchange x, boolean close) {
        if (current != null && current != x) {
            return;
        }
        current = null;
        if (close || !keepAlive) {
            closing = true;
            held = null;
            releaseHeldPiece();
            ctx.flush();
            ctx.channel().close();
            return;
        }
        if (!inRequest) {
            next();
        } else {
            // Answered before the body ended (a refusal): drop the rest of it as it comes, then serve what follows.
            ctx.channel().config().setAutoRead(true);
            ctx.read();
            retime();
        }
    }

    /** The current request is over, head to END: serve the next pipelined one, or read again. */
    private void next() {
        Object o;
        while (!closing && !answering() && (o = backlog.poll()) != null) {
            dispatch(o);
        }
        if (held != null && !closing) {
            open(); // a pipelined head whose body is not here yet
        }
        if (!closing && !answering()) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        }
        retime();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closing = true;
        retime(); // stops the clock: the timer must not keep a closed connection reachable
        held = null; // a head alone holds no buffer
        releaseHeldPiece();
        if (current != null) {
            ProxyExchange x = current;
            current = null;
            x.abort(499, "downstream-closed"); // the client closed the connection
        }
        Object o;
        while ((o = backlog.poll()) != null) {
            ReferenceCountUtil.release(o);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
}
