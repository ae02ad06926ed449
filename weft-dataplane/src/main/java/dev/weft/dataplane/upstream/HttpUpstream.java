package dev.weft.dataplane.upstream;

import dev.weft.dataplane.http.Http1Writer;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.http.WmpHeads;
import dev.weft.dataplane.transport.Transport;
import dev.weft.registry.Endpoint;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToIntFunction;

/**
 * Requests over pooled keep-alive HTTP/1.1 connections: to the local app (inbound side), or to peer sidecars with
 * {@code --mesh-protocol http1}. Each Worker loop has its own stack of idle connections per address, registered on
 * that loop, so a call never leaves its thread and the pool needs no lock. One call per connection at a time
 * (HTTP/1.1); how many connections are busy is bounded by admission (capacity slots) before {@link #open}.
 *
 * <p>Circuit breaking on connections (Envoy's {@code max_connections}): the connections open to one address, over
 * all Workers and idle ones included, never exceed the cap the destination's policy sets; a call that would need one
 * more fails at once with {@link Upstream.CircuitOpenException} and is counted ({@link #circuitOpen()}). The count
 * is an atomic per address, taken before the dial and given back when the channel closes (or the dial fails). Idle
 * connections count, so when the cap refuses a call each other Worker closes one of its idle connections to that
 * address: the next call finds room instead of being refused until idle connections time out.
 *
 * <p>Back-pressure: the answer's body is read from the upstream socket only while the caller has passed on (via
 * {@link UpstreamCall#consumed}) all but {@link #MAX_UNCONSUMED} bytes of it, so a slow caller slows the upstream
 * rather than filling memory.
 *
 * <p>Thread: the Worker loop given to {@link #open}. Buffers: request bodies given to a call are written (the HTTP
 * encoder releases them), or, for a whole small request, copied behind its head by {@link Http1Writer} (which
 * releases the body; the write releases that buffer); answer contents read are handed to the listener, which owns
 * them.
 */
public final class HttpUpstream implements Upstream {
    static final int MAX_UNCONSUMED = 256 * 1024;

    private final Transport transport;
    private final String description;
    private final Map<EventLoop, Map<String, ArrayDeque<Connection>>> idle = new ConcurrentHashMap<>();
    private final LongAdder opened = new LongAdder();
    private final LongAdder connectFailures = new LongAdder();
    private final LongAdder circuitOpen = new LongAdder();
    private final Map<String, AtomicInteger> openPerAddress = new ConcurrentHashMap<>();
    private final ToIntFunction<Endpoint> maxConnections;

    /** @param description names the upstream in errors, e.g. "app" or "peer sidecar" */
    public HttpUpstream(Transport transport, String description) {
        this(transport, description, e -> 0);
    }

    /**
     * @param maxConnections the most connections to an endpoint, read at each dial (so a policy change applies to
     *                       the next one); 0 for no cap
     */
    public HttpUpstream(Transport transport, String description, ToIntFunction<Endpoint> maxConnections) {
        this.transport = transport;
        this.description = description;
        this.maxConnections = maxConnections;
    }

    /** Calls failed fast because their endpoint had as many connections as allowed. */
    public long circuitOpen() {
        return circuitOpen.sum();
    }

    public long opened() {
        return opened.sum();
    }

    public long connectFailures() {
        return connectFailures.sum();
    }

    @Override
    public Future<UpstreamCall> open(EventLoop loop, Endpoint endpoint, String address, UpstreamListener listener) {
        ArrayDeque<Connection> stack = idle.computeIfAbsent(loop, l -> new HashMap<>())
                .computeIfAbsent(address, k -> new ArrayDeque<>());
        Connection c;
        while ((c = stack.pollLast()) != null) {
            if (c.channel.isActive()) {
                return loop.newSucceededFuture(c.begin(listener));
            }
        }
        AtomicInteger open = openPerAddress.computeIfAbsent(address, k -> new AtomicInteger());
        int max = maxConnections.applyAsInt(endpoint);
        if (!tryTake(open, max)) {
            circuitOpen.increment();
            closeOneIdleElsewhere(loop, address);
            return loop.newFailedFuture(new CircuitOpenException(description + " at " + address + " already has "
                    + max + " connections (circuit-breaker max-connections)"));
        }
        Promise<UpstreamCall> promise = loop.newPromise();
        Connection conn = new Connection(stack, address);
        new Bootstrap()
                .group(loop)
                .channel(transport.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 2000)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // Netty's HttpClientCodec pairs each answer with its request's method through its encoder;
                        // a whole small request here skips the encoder (Http1Writer), so the Connection tells the
                        // decoder itself when the answer is to a HEAD and has no body.
                        ch.pipeline().addLast("http-decoder", new AnswerDecoder(conn));
                        ch.pipeline().addLast("http-encoder", new HttpRequestEncoder());
                        // Idle keep-alive connections close after a minute so a quiet sidecar holds few sockets.
                        // Reads only: watching writes would put a real promise on every write (see MeshSession).
                        ch.pipeline().addLast("idle", new IdleStateHandler(60, 0, 0, TimeUnit.SECONDS));
                        ch.pipeline().addLast("upstream", conn);
                    }
                })
                .connect(new InetSocketAddress(endpoint.host(), endpoint.port()))
                .addListener(f -> {
                    if (f.isSuccess()) {
                        opened.increment();
                        conn.channel.closeFuture().addListener(x -> open.decrementAndGet());
                        promise.setSuccess(conn.begin(listener));
                    } else {
                        open.decrementAndGet();
                        connectFailures.increment();
                        promise.setFailure(new ConnectException(description + " at " + address
                                + " is not accepting connections (" + f.cause().getMessage() + ")", f.cause()));
                    }
                });
        return promise;
    }

    /** Asks every other Worker to close one idle connection to {@code address}, on its own loop (the stacks are not shared). */
    private void closeOneIdleElsewhere(EventLoop self, String address) {
        idle.forEach((loop, byAddress) -> {
            if (loop != self) {
                loop.execute(() -> {
                    ArrayDeque<Connection> stack = byAddress.get(address);
                    Connection c = stack == null ? null : stack.pollFirst();
                    if (c != null) {
                        c.channel.close();
                    }
                });
            }
        });
    }

    /** Counts one more connection unless {@code max} (0 = no cap) are already open. Lock free. */
    private static boolean tryTake(AtomicInteger open, int max) {
        while (true) {
            int n = open.get();
            if (max > 0 && n >= max) {
                return false;
            }
            if (open.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** One keep-alive connection and, while one runs, its call. Confined to its loop. */
    private final class Connection extends ChannelInboundHandlerAdapter implements UpstreamCall {
        private final ArrayDeque<Connection> pool;
        private final String address;
        private Channel channel;
        /** The request encoder's context: a whole small request written through it skips the encoder. */
        private ChannelHandlerContext rawCtx;
        /** The call in progress is a HEAD: its answer has no body whatever its Content-Length says. */
        private boolean headRequest;
        private UpstreamListener listener;
        private HttpResponse pendingHead;
        private boolean headDelivered;
        private boolean requestDone;
        private boolean responseDone;
        private boolean keepAlive;
        private int unconsumed;

        Connection(ArrayDeque<Connection> pool, String address) {
            this.pool = pool;
            this.address = address;
        }

        Connection begin(UpstreamListener l) {
            listener = l;
            pendingHead = null;
            headDelivered = false;
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
            rawCtx = ctx.pipeline().context(HttpRequestEncoder.class);
        }

        @Override
        public void sendHead(RequestHead in, String authority, String clientAddress, ByteBuf body, boolean endStream) {
            // The fields filtered for this hop, in a WMP list that the head keeps (no Netty header map).
            HttpRequest head = WmpHeads.request(HttpMethod.valueOf(in.method()), in.path(),
                    ProxyHeaders.forward(in.fields(), true, clientAddress));
            // Edited through WmpHeads, so that a head from WMP keeps its fields in their list (no header map).
            WmpHeads.set(head, "host", authority);
            if (endStream) {
                // The whole body is here: a fixed length is cheaper for the upstream than chunking.
                if (body.isReadable() || WmpHeads.has(head, "content-length")) {
                    WmpHeads.set(head, "content-length", Integer.toString(body.readableBytes()));
                }
            } else if (!WmpHeads.has(head, "content-length")) {
                HttpUtil.setTransferEncodingChunked(head, true);
            }
            headRequest = HttpMethod.HEAD.equals(head.method());
            if (endStream && listener != null && Http1Writer.fits(head, body)) {
                // The usual request: complete and small. One buffer, one write, past the encoder (the length is set
                // above, and the encoder's state stays at the start of a message).
                requestDone = true;
                rawCtx.writeAndFlush(Http1Writer.message(channel.alloc(), head, body), rawCtx.voidPromise());
                releaseIfDone();
                return;
            }
            channel.write(head, channel.voidPromise());
            sendData(body, endStream);
        }

        @Override
        public void sendData(ByteBuf body, boolean endStream) {
            if (listener == null) {
                body.release();
                return;
            }
            if (endStream) {
                requestDone = true;
                channel.writeAndFlush(new DefaultLastHttpContent(body), channel.voidPromise());
                releaseIfDone();
            } else if (body.isReadable()) {
                channel.writeAndFlush(new DefaultHttpContent(body), channel.voidPromise());
            } else {
                body.release();
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
            UpstreamListener l = listener;
            listener = null;
            channel.close();
            if (l == null) {
                return;
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            UpstreamListener l = listener;
            if (l == null || responseDone) {
                ReferenceCountUtil.release(msg);
                ctx.close(); // an answer nobody asked for: the connection's framing can no longer be trusted
                return;
            }
            if (msg instanceof HttpResponse r) {
                if (r.status().code() == 100) {
                    ReferenceCountUtil.release(msg); // interim answer to our own Expect: not the caller's answer
                    return;
                }
                pendingHead = r;
                keepAlive = HttpUtil.isKeepAlive(r);
            }
            if (msg instanceof HttpContent c) {
                boolean last = c instanceof LastHttpContent;
                ByteBuf body = c.content();
                unconsumed += body.readableBytes();
                if (last) {
                    responseDone = true;
                }
                if (!headDelivered) {
                    headDelivered = true;
                    HttpResponse h = pendingHead;
                    pendingHead = null;
                    l.onResponseHead(forwardedHead(h), body, last);
                } else {
                    l.onResponseData(body, last);
                }
                if (last) {
                    releaseIfDone();
                } else if (unconsumed >= MAX_UNCONSUMED) {
                    ctx.channel().config().setAutoRead(false);
                }
            }
        }

        /** The answer head with hop-by-hop headers dropped and this hop added to Via. */
        private ResponseHead forwardedHead(HttpResponse in) {
            return new ResponseHead(in.status().code(), ProxyHeaders.toWmp(in.headers(), false, null)).keepAlive(keepAlive);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            // The head came without any body bytes in this read: deliver it now rather than wait for the body.
            if (listener != null && pendingHead != null && !headDelivered) {
                headDelivered = true;
                HttpResponse h = pendingHead;
                pendingHead = null;
                listener.onResponseHead(forwardedHead(h), Unpooled.EMPTY_BUFFER, false);
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
            UpstreamListener l = listener;
            listener = null;
            if (l != null && !responseDone) {
                l.onReset(description + " at " + address + (headDelivered ? " closed the connection mid-answer"
                        : " closed the connection before answering"), false);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * Netty's response decoder, told by its {@link Connection} when the answer is to a HEAD request (no body follows,
     * whatever the head says), which Netty's client codec learns from its own encoder. Thread: the connection's loop.
     */
    private static final class AnswerDecoder extends HttpResponseDecoder {
        private final Connection connection;

        AnswerDecoder(Connection connection) {
            this.connection = connection;
        }

        @Override
        protected boolean isContentAlwaysEmpty(HttpMessage msg) {
            return connection.headRequest || super.isContentAlwaysEmpty(msg);
        }
    }
}
