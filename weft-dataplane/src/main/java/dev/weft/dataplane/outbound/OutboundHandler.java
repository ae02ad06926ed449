package dev.weft.dataplane.outbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.collab.Exchange;
import dev.weft.dataplane.http.HttpErrors;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.StrictHttpRequestDecoder;
import dev.weft.dataplane.mesh.MeshPool;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Locale;

/**
 * The outbound path, app side: one instance per connection from the local application. It turns each HTTP/1.1
 * request into a WMP stream to a peer sidecar and the stream's answer back into an HTTP/1.1 response.
 *
 * <p>Order of work for one request (read top to bottom, then {@link OutboundExchange}):
 * <ol>
 *   <li>reject what must not be forwarded: malformed (400), headers too large (431), Content-Length together with
 *       Transfer-Encoding (400: request smuggling);</li>
 *   <li>name the destination service: the listener's bound service ({@code --upstream NAME=...}) or the Host
 *       header (on {@code --outbound});</li>
 *   <li>hand the exchange to the {@link Collaborator}: admit (a capacity slot at an endpoint, via the Worker's
 *       balancer, waiting in the cluster's bounded queue if all are full), connect (a pooled mesh connection on this
 *       same loop), forward (REQUEST frame, then body as DATA frames under flow control), await the RESPONSE, relay
 *       it.</li>
 * </ol>
 * HTTP/1.1 answers must go back in request order, so one exchange runs at a time per connection; pipelined
 * requests wait in {@code backlog}, and reading stops while they do, which bounds memory.
 *
 * <p>Thread: the connection's Worker event loop only. Buffers: HTTP contents read from the decoder are owned
 * here until passed to a stream (ownership moves to the WMP encoder) or released; WMP frames from the stream
 * listener are owned here until their body is written to the app channel (the HTTP encoder releases it).
 */
public final class OutboundHandler extends ChannelInboundHandlerAdapter {
    /** A request whose dial fails is tried on up to this many endpoints in all. */
    private static final int MAX_ATTEMPTS = 3;

    private final String boundService;
    private final Router router;
    private final MeshPool meshPool;
    private final Collaborator collaborator;
    private final SidecarMetrics metrics;
    private final TrafficMetrics traffic;
    private final ArrayDeque<Object> backlog = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    private OutboundExchange current;
    private boolean closing;
    private String clientAddress;

    /** @param boundService the service this listener is bound to, or null to route by Host header */
    public OutboundHandler(String boundService, Router router, MeshPool meshPool, Collaborator collaborator,
                           SidecarMetrics metrics) {
        this.boundService = boundService;
        this.router = router;
        this.meshPool = meshPool;
        this.collaborator = collaborator;
        this.metrics = metrics;
        this.traffic = metrics.outbound;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
            clientAddress = a.getAddress().getHostAddress();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (closing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (current != null && current.requestComplete) {
            backlog.add(msg); // a pipelined request: its turn comes when the current answer is done
            ctx.channel().config().setAutoRead(false);
            return;
        }
        dispatch(msg);
    }

    private void dispatch(Object msg) {
        if (msg instanceof HttpRequest req) {
            startExchange(req);
            if (msg instanceof HttpContent c && current != null) {
                current.onRequestContent(c);
            } else if (msg instanceof HttpContent c) {
                c.release();
            }
        } else if (msg instanceof HttpContent c) {
            if (current != null && !current.requestComplete) {
                current.onRequestContent(c);
            } else {
                c.release(); // the rest of a request we already answered with an error
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    private void startExchange(HttpRequest req) {
        long start = System.nanoTime();
        traffic.started();
        if (req.decoderResult().isFailure()) {
            rejectMalformed(req.decoderResult().cause(), start);
            return;
        }
        String service = boundService != null ? boundService : serviceFromHost(req);
        if (service == null) {
            metrics.badRequests.increment();
            respondError(HttpResponseStatus.BAD_REQUEST, "bad-request",
                    "missing Host header: name the destination service in Host (e.g. Host: provider)", start, true);
            return;
        }
        Cluster cluster = router.cluster(service);
        if (cluster == null) {
            metrics.unknownService.increment();
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "unknown-service",
                    "unknown service '" + service + "': too many distinct destinations", start, false);
            return;
        }
        current = new OutboundExchange(req, cluster, start);
        collaborator.carry(current);
    }

    private void rejectMalformed(Throwable cause, long start) {
        if (cause instanceof TooLongHttpHeaderException) {
            metrics.headersTooLarge.increment();
            respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "headers-too-large",
                    "request headers too large: " + cause.getMessage(), start, true);
        } else if (cause instanceof TooLongHttpLineException) {
            metrics.badRequests.increment();
            respondError(HttpResponseStatus.REQUEST_URI_TOO_LONG, "uri-too-long",
                    "request line too long: " + cause.getMessage(), start, true);
        } else if (cause instanceof TooLongFrameException) {
            metrics.headersTooLarge.increment();
            respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "headers-too-large",
                    "request headers too large: " + cause.getMessage(), start, true);
        } else if (StrictHttpRequestDecoder.CONFLICTING_FRAMING.equals(cause.getMessage())) {
            metrics.smuggling.increment();
            respondError(HttpResponseStatus.BAD_REQUEST, "conflicting-framing",
                    "rejected: request has both Content-Length and Transfer-Encoding (possible request smuggling)",
                    start, true);
        } else {
            metrics.badRequests.increment();
            respondError(HttpResponseStatus.BAD_REQUEST, "bad-request", "malformed request: " + cause.getMessage(),
                    start, true);
        }
    }

    private static String serviceFromHost(HttpRequest req) {
        String host = req.headers().get(HttpHeaderNames.HOST);
        if (host == null || host.isBlank()) {
            return null;
        }
        int colon = host.lastIndexOf(':');
        if (colon > 0 && host.indexOf(']') < colon) {
            host = host.substring(0, colon);
        }
        return host.trim().toLowerCase(Locale.ROOT);
    }

    /** A sidecar-generated error. {@code close}: the request's framing cannot be trusted, so the connection ends. */
    private void respondError(HttpResponseStatus status, String kind, String message, long start, boolean close) {
        traffic.finished(status.code(), start, true);
        if (close) {
            closing = true;
            ctx.channel().config().setAutoRead(false);
        }
        ctx.writeAndFlush(HttpErrors.response(ctx.alloc(), status, kind, message, close))
                .addListener(close ? ChannelFutureListener.CLOSE : ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    /** The current exchange is over: serve the next pipelined request, or read again. */
    private void exchangeDone(OutboundExchange ex, boolean closeAfter) {
        if (current != ex) {
            return;
        }
        current = null;
        if (closeAfter) {
            closing = true;
            ctx.flush();
            ctx.channel().close();
            return;
        }
        while (!backlog.isEmpty() && (current == null || !current.requestComplete) && !closing) {
            dispatch(backlog.poll());
        }
        if (current == null || !current.requestComplete) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closing = true;
        if (current != null) {
            current.abort("client closed the connection");
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

    /** One request/response. Driven by the Collaborator through {@link Exchange}; fed by the mesh stream. */
    private final class OutboundExchange implements Exchange, MeshStream.Listener {
        private final HttpRequest request;
        private final Cluster cluster;
        private final long start;
        private final boolean keepAlive;
        private final ArrayDeque<HttpContent> pendingBody = new ArrayDeque<>(2);
        private final ArrayDeque<WmpData> pendingAnswer = new ArrayDeque<>(0);
        boolean requestComplete;
        private int attempts = 1;
        private EndpointState endpoint;
        private MeshSession session;
        private MeshStream stream;
        private Promise<Void> answered;
        private WmpResponse head;
        private boolean relayed;
        private boolean finished;

        OutboundExchange(HttpRequest request, Cluster cluster, long start) {
            this.request = request;
            this.cluster = cluster;
            this.start = start;
            this.keepAlive = HttpUtil.isKeepAlive(request);
        }

        @Override
        public EventLoop loop() {
            return ctx.channel().eventLoop();
        }

        @Override
        public Future<?> admit() {
            return Exchange.onLoop(loop(), () -> {
                Future<EndpointState> f = cluster.acquire(loop());
                f.addListener(x -> {
                    if (x.isSuccess()) {
                        endpoint = f.getNow();
                        if (finished) {
                            releaseSlot(); // the client left while we waited for capacity
                        }
                    }
                });
                return f;
            });
        }

        @Override
        public Future<?> connect() {
            return Exchange.onLoop(loop(), () -> {
                if (finished) {
                    return loop().newFailedFuture(new IllegalStateException("exchange abandoned"));
                }
                Future<MeshSession> f = meshPool.session(loop(), endpoint.endpoint().host(), endpoint.endpoint().port());
                f.addListener(x -> {
                    if (x.isSuccess()) {
                        session = f.getNow();
                        if (endpoint != null) {
                            endpoint.markReachable();
                        }
                    }
                });
                return f;
            });
        }

        @Override
        public Future<?> forward() {
            return Exchange.onLoop(loop(), () -> {
                if (finished) {
                    return loop().newFailedFuture(new IllegalStateException("exchange abandoned"));
                }
                answered = loop().newPromise();
                stream = session.openStream();
                stream.listener(this);
                sendRequestHead();
                return answered;
            });
        }

        /**
         * Sends the REQUEST frame. When the whole body is already here (the common small request), it rides in the
         * same frame: one frame per request instead of two saves 16 bytes and a write.
         */
        private void sendRequestHead() {
            WmpHeaders headers = ProxyHeaders.toWmp(request.headers(), true, clientAddress);
            String authority = cluster.service();
            ByteBuf body = Unpooled.EMPTY_BUFFER;
            boolean end = false;
            HttpContent first = pendingBody.peek();
            if (first != null && first instanceof LastHttpContent && first.content().readableBytes() <= MeshStream.INITIAL_WINDOW) {
                pendingBody.poll();
                body = first.content();
                end = true;
                requestComplete = true;
            }
            int bytes = body.readableBytes();
            traffic.bytesIn(bytes);
            stream.sendHead(new WmpRequest(stream.id(), end, request.method().name(), authority, request.uri(),
                    headers, body), bytes, end);
            pumpBody();
        }

        void onRequestContent(HttpContent c) {
            if (c instanceof LastHttpContent) {
                requestComplete = true;
            }
            pendingBody.add(c);
            if (stream != null) {
                pumpBody();
            } else {
                // Not admitted yet: hold at most what is already decoded and stop reading until we are.
                ctx.channel().config().setAutoRead(false);
            }
        }

        /** Moves request body chunks into the stream as far as flow control allows. */
        private void pumpBody() {
            if (stream == null || stream.isClosed()) {
                return;
            }
            HttpContent c;
            while ((c = pendingBody.peek()) != null && stream.canSend()) {
                pendingBody.poll();
                boolean last = c instanceof LastHttpContent;
                traffic.bytesIn(c.content().readableBytes());
                stream.sendData(c.content(), last);
            }
            if (!pendingBody.isEmpty()) {
                ctx.channel().config().setAutoRead(false);
                stream.awaitWritable();
            } else if (!requestComplete) {
                ctx.channel().config().setAutoRead(true);
            }
        }

        @Override
        public void onWritable() {
            pumpBody();
        }

        @Override
        public void onHead(WmpFrame frame) {
            if (!(frame instanceof WmpResponse r) || finished) {
                frame.release();
                return;
            }
            head = r;
            answered.trySuccess(null);
        }

        @Override
        public void relay() {
            if (finished || head == null) {
                if (head != null) {
                    head.release();
                }
                return;
            }
            relayed = true;
            WmpResponse r = head;
            head = null;
            HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(r.status()));
            ProxyHeaders.toHttp(r.headers(), response.headers());
            if (r.endStream() && !response.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
                response.headers().set(HttpHeaderNames.CONTENT_LENGTH, r.body().readableBytes());
            } else if (!r.endStream() && !response.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
                response.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
            if (!keepAlive) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
            status = r.status();
            ctx.write(response, ctx.voidPromise());
            writeBody(r.body(), r.endStream());
            WmpData d;
            while ((d = pendingAnswer.poll()) != null) {
                writeBody(d.body(), d.endStream());
            }
        }

        private int status;

        @Override
        public void onData(WmpData data) {
            if (finished) {
                data.release();
                return;
            }
            if (!relayed) {
                pendingAnswer.add(data); // the virtual-thread Collaborator has not relayed the head yet
                return;
            }
            writeBody(data.body(), data.endStream());
        }

        /** Writes an answer body chunk to the app; credit goes back to the peer once the socket took it. */
        private void writeBody(ByteBuf body, boolean end) {
            int n = body.readableBytes();
            traffic.bytesOut(n);
            HttpContent chunk = end ? new DefaultLastHttpContent(body) : new DefaultHttpContent(body);
            if (end) {
                ctx.writeAndFlush(chunk, ctx.voidPromise());
                finish(false);
            } else {
                MeshStream s = stream;
                ctx.writeAndFlush(chunk).addListener(f -> {
                    if (f.isSuccess() && n > 0) {
                        s.consumed(n);
                    }
                });
            }
        }

        @Override
        public void onReset(String reason, boolean refused) {
            metrics.streamsReset.increment();
            if (!relayed) {
                fail(new MeshResetException(reason));
            } else {
                // The answer already started; HTTP/1.1 can only signal truncation by closing.
                finish(true);
            }
        }

        @Override
        public void fail(Throwable cause) {
            if (finished) {
                return;
            }
            if (endpoint != null && !(cause instanceof Cluster.NoCapacityException)) {
                endpoint.recordFailure();
            }
            if (cause instanceof MeshPool.MeshConnectException && attempts < MAX_ATTEMPTS) {
                // Nothing was sent (the dial failed), so trying another endpoint cannot duplicate the request.
                // This is what keeps a killed instance from failing requests until its lease expires.
                attempts++;
                metrics.connectRetries.increment();
                if (endpoint != null) {
                    endpoint.markUnreachable();
                }
                releaseSlot();
                session = null;
                collaborator.carry(this);
                return;
            }
            HttpResponseStatus st;
            String kind;
            if (cause instanceof Cluster.UnknownServiceException) {
                metrics.unknownService.increment();
                st = HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = "unknown-service";
            } else if (cause instanceof Cluster.NoCapacityException) {
                st = HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = "no-capacity";
            } else if (cause instanceof MeshPool.MeshConnectException) {
                st = HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = "upstream-connect";
            } else {
                st = HttpResponseStatus.BAD_GATEWAY;
                kind = "upstream-reset";
            }
            finished = true;
            if (stream != null && !stream.isClosed()) {
                stream.cancel(WmpError.CANCELLED);
            }
            releaseSlot();
            releasePending();
            traffic.finished(st.code(), start, true);
            boolean close = !requestComplete || !keepAlive;
            ctx.writeAndFlush(HttpErrors.response(ctx.alloc(), st, kind, cause.getMessage(), close));
            exchangeDone(this, close);
        }

        private void finish(boolean closeConnection) {
            if (finished) {
                return;
            }
            finished = true;
            releaseSlot();
            releasePending();
            traffic.finished(status, start, false);
            // An answer that ended before its request body did leaves unread bytes: the connection cannot be reused.
            exchangeDone(this, closeConnection || !keepAlive || !requestComplete);
        }

        void abort(String why) {
            if (finished) {
                return;
            }
            finished = true;
            if (stream != null && !stream.isClosed()) {
                stream.cancel(WmpError.CANCELLED); // frees the upstream's slot at once
            }
            if (answered != null) {
                answered.tryFailure(new MeshResetException(why));
            }
            releaseSlot();
            releasePending();
            traffic.finished(499, start, false);
            current = null;
        }

        private void releaseSlot() {
            if (endpoint != null) {
                EndpointState e = endpoint;
                endpoint = null;
                cluster.release(e);
            }
        }

        private void releasePending() {
            HttpContent c;
            while ((c = pendingBody.poll()) != null) {
                c.release();
            }
            WmpData d;
            while ((d = pendingAnswer.poll()) != null) {
                d.release();
            }
            if (head != null) {
                head.release();
                head = null;
            }
        }
    }

    /** The peer reset the stream or the connection to it died before an answer started. */
    static final class MeshResetException extends Exception {
        MeshResetException(String message) {
            super("upstream reset before answering: " + message, null, false, false);
        }
    }
}
