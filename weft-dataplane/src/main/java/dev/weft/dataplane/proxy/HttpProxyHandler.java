package dev.weft.dataplane.proxy;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.balancing.OutboundLimit;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.collab.Exchange;
import dev.weft.dataplane.http.Http1Writer;
import dev.weft.dataplane.http.HttpErrors;
import dev.weft.dataplane.http.WmpHeads;
import dev.weft.dataplane.http.StrictHttpRequestDecoder;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.observe.HeaderAccess;
import dev.weft.dataplane.resilience.DeadlineTimer;
import dev.weft.dataplane.resilience.Deadlines;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.dataplane.upstream.UpstreamCall;
import dev.weft.dataplane.upstream.UpstreamListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/1.1 front of every proxy path: one instance per downstream connection. On a consumer-side sidecar the
 * downstream is the local app and the upstream a peer sidecar; on a provider-side sidecar reached over HTTP/1.1
 * ({@code --mesh-protocol http1}) the downstream is the peer and the upstream the local app.
 *
 * <p>Order of work for one request (read top to bottom, then {@link ProxyExchange}):
 * <ol>
 *   <li>reject what must not be forwarded: malformed (400), headers too large (431), request line too long (414),
 *       Content-Length together with Transfer-Encoding (400: request smuggling);</li>
 *   <li>resolve the {@link Destination}: a cluster of endpoints;</li>
 *   <li>hand the exchange to the {@link Collaborator}: admit (a capacity slot at an endpoint, via the Worker's
 *       balancer, waiting in the cluster's bounded queue if all are full), connect (an {@link Upstream} call on a
 *       pooled connection on this same loop), forward (head, then body under flow control), await the answer's head,
 *       relay it.</li>
 * </ol>
 * HTTP/1.1 answers must go back in request order, so one exchange runs at a time per connection; pipelined
 * requests wait in {@code backlog}, and reading stops while they do, which bounds memory.
 *
 * <p>Thread: the connection's Worker event loop only. Buffers: HTTP contents read from the decoder are owned
 * here until passed to the upstream call (which then owns them) or released; answer bodies from the upstream are
 * owned here until written to the downstream channel (the HTTP encoder releases them; a whole small answer is
 * copied behind its head by {@link Http1Writer}, which releases the body, and the write releases that buffer).
 */
public final class HttpProxyHandler extends ChannelInboundHandlerAdapter {
    private final Destination destination;
    private final Upstream upstream;
    private final Collaborator collaborator;
    private final SidecarMetrics metrics;
    private final TrafficMetrics traffic;
    private final boolean addClientAddress;
    private final ExchangeObserver observer;
    private final String localService;
    private final ExchangeObserver.Direction direction;
    private final ArrayDeque<Object> backlog = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    /**
     * The HTTP encoder's context: a whole answer written through it skips the encoder (see {@link Http1Writer}).
     * Null if the pipeline has no {@code HttpResponseEncoder}; every answer then goes through the encoder.
     */
    private ChannelHandlerContext rawCtx;
    private ProxyExchange current;
    private HttpRequest heldRequest;
    private boolean closing;
    private String clientAddress;
    private String peer;

    /**
     * @param direction        OUTBOUND for the app's calls (the upstream is a peer sidecar), INBOUND for the mesh's
     *                         (the upstream is the local app); picks the counters, and what a refused dial means
     * @param addClientAddress append the downstream's address to X-Forwarded-For: true where the downstream is the
     *                         original client, false on the mesh's second hop (the first hop already added it)
     */
    public HttpProxyHandler(Destination destination, Upstream upstream, Collaborator collaborator,
                            SidecarMetrics metrics, ExchangeObserver.Direction direction, boolean addClientAddress,
                            ExchangeObserver observer, String localService) {
        this.observer = observer;
        this.localService = localService;
        this.direction = direction;
        TrafficMetrics traffic = direction == ExchangeObserver.Direction.INBOUND ? metrics.inbound : metrics.outbound;
        this.destination = destination;
        this.upstream = upstream;
        this.collaborator = collaborator;
        this.metrics = metrics;
        this.traffic = traffic;
        this.addClientAddress = addClientAddress;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.rawCtx = ctx.pipeline().context(HttpResponseEncoder.class);
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
            peer = a.getAddress().getHostAddress() + ":" + a.getPort();
        }
        if (addClientAddress && ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
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

    /**
     * A request head is held until its first body chunk (or the end of the current read) so that a small request
     * starts with its whole body in hand and crosses the mesh as one frame: the decoder emits the head and the body
     * as separate messages even when they arrived in one packet.
     */
    private void dispatch(Object msg) {
        if (msg instanceof HttpRequest req) {
            startHeld();
            if (msg instanceof HttpContent c) {
                startExchange(req, c);
            } else {
                heldRequest = req;
            }
        } else if (msg instanceof HttpContent c) {
            if (heldRequest != null) {
                HttpRequest req = heldRequest;
                heldRequest = null;
                startExchange(req, c);
            } else if (current != null && !current.requestComplete) {
                current.onRequestContent(c);
            } else {
                c.release(); // the rest of a request we already answered with an error
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        startHeld(); // the body did not come with the head: start without it (Expect: 100-continue, slow clients)
        ctx.fireChannelReadComplete();
    }

    private void startHeld() {
        if (heldRequest != null) {
            HttpRequest req = heldRequest;
            heldRequest = null;
            startExchange(req, null);
        }
    }

    /** @param first the first body chunk, or null if none arrived with the head (owned here from now on) */
    private void startExchange(HttpRequest req, HttpContent first) {
        if (first != null && (current != null || closing)) {
            first.release();
            first = null;
        }
        startExchange(req);
        if (current == null) {
            if (first != null) {
                first.release();
            }
            return;
        }
        if (first != null) {
            current.onRequestContent(first);
        }
        current.carried = true;
        collaborator.carry(current);
    }

    private void startExchange(HttpRequest req) {
        long start = System.nanoTime();
        traffic.started();
        if (req.decoderResult().isFailure()) {
            rejectMalformed(req.decoderResult().cause(), start);
            return;
        }
        ExchangeTrace trace = observer.start(direction, localService, req.method().name(), req.uri(),
                HeaderAccess.of(req.headers()), peer);
        Cluster cluster;
        try {
            cluster = destination.resolve(req);
        } catch (Destination.RouteException e) {
            if ("unknown-service".equals(e.kind())) {
                metrics.unknownService.increment();
            } else {
                metrics.badRequests.increment();
            }
            respondError(HttpResponseStatus.valueOf(e.status()), e.kind(), e.getMessage(), start, e.status() == 400);
            trace.end(e.status(), 0, 0, e.kind());
            return;
        }
        ServicePolicy.Route route = cluster.policy().route(req.method().name(), req.uri());
        trace.routed(cluster.service(), route != null ? route.name() : null);
        if (direction == ExchangeObserver.Direction.INBOUND) {
            long wait = cluster.checkRate(req.headers().get(Deadlines.CALLER_HEADER), route);
            if (wait != 0) {
                respondRateLimited(wait, start);
                trace.end(429, 0, 0, "rate-limited");
                return;
            }
        } else {
            // Tells the callee who calls (per-caller rate limits, service map); the app cannot forge another name.
            req.headers().set(Deadlines.CALLER_HEADER, localService);
        }
        OutboundLimit limit = null;
        int inFlight = 0;
        if (direction == ExchangeObserver.Direction.OUTBOUND) {
            // The first hop refuses what the service cannot take in time, before it costs anything further on.
            limit = cluster.outboundLimit();
            inFlight = cluster.tryEnterOutbound(limit);
            if (inFlight < 0) {
                respondOutboundLimit(cluster, cluster.outboundLimitNow(), start);
                trace.end(503, 0, 0, OUTBOUND_LIMIT);
                return;
            }
        }
        current = new ProxyExchange(req, cluster, route != null ? route.policy() : cluster.policy(), start, trace);
        current.outboundLimit = limit;
        current.outboundInFlight = inFlight;
    }

    /** The {@code x-weft-error} of a request refused by the outbound limit. */
    static final String OUTBOUND_LIMIT = "outbound-limit";

    /** 503 at once: nothing was sent anywhere, so the caller may safely try again (later, or elsewhere). */
    private void respondOutboundLimit(Cluster cluster, int limit, long start) {
        traffic.finished(503, start, true);
        var r = HttpErrors.response(ctx.alloc(), HttpResponseStatus.SERVICE_UNAVAILABLE, OUTBOUND_LIMIT,
                "weft: outbound concurrency limit " + limit + " to service '" + cluster.service() + "' reached", false);
        r.headers().set(Deadlines.UNPROCESSED_HEADER, "true");
        ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        // The request body (if any) still arrives; it is dropped by dispatch() because there is no current exchange.
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

    private void respondRateLimited(long waitNanos, long start) {
        traffic.finished(429, start, true);
        long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(waitNanos + 999_999_999L));
        var r = HttpErrors.response(ctx.alloc(), HttpResponseStatus.TOO_MANY_REQUESTS, "rate-limited",
                "rate limit of service '" + localService + "' exceeded; retry after " + seconds + " s", false);
        r.headers().set(HttpHeaderNames.RETRY_AFTER, seconds);
        ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        // The request body (if any) still arrives; it is dropped by dispatch() because there is no current exchange.
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
    private void exchangeDone(ProxyExchange ex, boolean closeAfter) {
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
        heldRequest = null; // a head alone holds no buffer
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

    /** One request/response. Driven by the Collaborator through {@link Exchange}; fed by the upstream call. */
    private final class ProxyExchange extends DeadlineTimer.Entry implements Exchange, UpstreamListener {
        /** A body up to this size that is already complete rides in the head's frame/write. */
        private static final int INLINE_BODY_LIMIT = 256 * 1024;

        private final HttpRequest request;
        private final Cluster cluster;
        private final long start;
        private final ExchangeTrace trace;
        private final boolean keepAlive;
        private long bytesIn;
        private long bytesOut;
        private long sentNanos;
        private int inFlightAtSend;
        private final ServicePolicy policy;
        private final long deadlineNanos;
        private ByteBuf replayBody;
        /** The endpoint the previous attempt went to: a retry's pick excludes it. */
        private EndpointState lastEndpoint;
        private final ArrayDeque<HttpContent> pendingBody = new ArrayDeque<>(2);
        /** Answer chunks that came before the head was relayed (virtual-thread Collaborator only); made when needed. */
        private ArrayDeque<HttpContent> pendingAnswer;
        boolean requestComplete;
        /** Set once handed to the Collaborator; body chunks arriving before are only queued. */
        boolean carried;
        private int attempts = 1;
        /** Outbound only: the limit this exchange holds a place in until its answer head, and the count it saw. */
        OutboundLimit outboundLimit;
        int outboundInFlight;
        private EndpointState endpoint;
        private UpstreamCall call;
        private Promise<Void> answered;
        private HttpResponse head;
        private ByteBuf headBody;
        private boolean headEnd;
        private boolean relayed;
        private boolean finished;
        private int status;

        ProxyExchange(HttpRequest request, Cluster cluster, ServicePolicy policy, long start, ExchangeTrace trace) {
            this.request = request;
            this.cluster = cluster;
            this.start = start;
            this.trace = trace;
            this.keepAlive = HttpUtil.isKeepAlive(request);
            this.policy = policy;
            // The budget is the policy's timeout, cut short by any deadline that came with the request.
            this.deadlineNanos = Deadlines.deadline(start, policy.timeout(), request.headers().get(Deadlines.DEADLINE_HEADER));
            if (deadlineNanos != 0) {
                DeadlineTimer.of(ctx.channel().eventLoop()).add(this, deadlineNanos);
            }
            cluster.retryBudget().deposit();
        }

        @Override
        public EventLoop loop() {
            return ctx.channel().eventLoop();
        }

        @Override
        public Future<?> admit() {
            return Exchange.onLoop(loop(), () -> {
                String hashHeader = cluster.hashHeader();
                long hash = hashHeader == null ? 0 : Balancer.hashOf(request.headers().get(hashHeader));
                // A retry goes to a different endpoint when one has room, whichever balancer is configured.
                Future<EndpointState> f = cluster.acquire(loop(), hash, lastEndpoint);
                f.addListener(x -> {
                    if (x.isSuccess()) {
                        endpoint = f.getNow();
                        if (finished) {
                            releaseSlot(); // the client left while we waited for capacity
                        } else {
                            trace.admitted(cluster.service(), endpoint.endpoint().id(), endpoint.address());
                        }
                    }
                });
                return f;
            });
        }

        @Override
        public Future<?> connect() {
            return Exchange.onLoop(loop(), () -> {
                if (finished || endpoint == null) {
                    return loop().newFailedFuture(new IllegalStateException("exchange abandoned"));
                }
                EndpointState target = endpoint;
                Future<UpstreamCall> f = upstream.open(loop(), target.endpoint(), target.address(), this);
                f.addListener(x -> {
                    if (x.isSuccess()) {
                        target.markReachable();
                        call = f.getNow();
                        trace.connected();
                        if (finished) {
                            call.cancel();
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
                sendRequestHead();
                return answered;
            });
        }

        /**
         * Sends the head. When the whole body is already here (the common small request), it rides with the head:
         * one WMP frame per request instead of two saves 16 bytes and a write.
         */
        private void sendRequestHead() {
            ByteBuf body = Unpooled.EMPTY_BUFFER;
            boolean end = false;
            HttpContent first = pendingBody.peek();
            if (replayBody != null) {
                body = replayBody.retainedDuplicate(); // a retry resends the body kept from the first attempt
                end = true;
            } else if (first == null && requestComplete) {
                end = true; // a retry of a request whose (empty) body was already sent: nothing more will come
            } else if (first instanceof LastHttpContent && first.content().readableBytes() <= INLINE_BODY_LIMIT) {
                pendingBody.poll();
                body = first.content();
                end = true;
                if (policy.retry().attempts() > 1) {
                    replayBody = body.retainedDuplicate();
                }
            }
            if (deadlineNanos != 0) {
                long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
                request.headers().set(Deadlines.DEADLINE_HEADER, remainingMs);
            }
            traffic.bytesIn(body.readableBytes());
            bytesIn += body.readableBytes();
            sentNanos = System.nanoTime();
            inFlightAtSend = endpoint.inFlight();
            call.sendHead(request, destination.authority(request, cluster), clientAddress, body, end);
            trace.sent();
            pumpBody();
        }

        void onRequestContent(HttpContent c) {
            if (c instanceof LastHttpContent) {
                requestComplete = true;
            }
            if (finished) {
                c.release();
                return;
            }
            pendingBody.add(c);
            if (!carried) {
                return; // the exchange starts right after this first chunk
            }
            if (call != null && answered != null) {
                pumpBody();
            } else {
                // Not forwarded yet: hold at most what is already decoded and stop reading until we are.
                ctx.channel().config().setAutoRead(false);
            }
        }

        /** Moves request body chunks upstream as far as flow control allows. */
        private void pumpBody() {
            if (call == null || finished) {
                return;
            }
            HttpContent c;
            while ((c = pendingBody.peek()) != null && call.canSend()) {
                pendingBody.poll();
                traffic.bytesIn(c.content().readableBytes());
                bytesIn += c.content().readableBytes();
                call.sendData(c.content(), c instanceof LastHttpContent);
            }
            if (!pendingBody.isEmpty()) {
                ctx.channel().config().setAutoRead(false);
                call.awaitWritable();
            } else if (!requestComplete) {
                ctx.channel().config().setAutoRead(true);
            }
        }

        @Override
        public void onWritable() {
            pumpBody();
        }

        @Override
        public void onResponseHead(HttpResponse h, ByteBuf body, boolean end) {
            if (finished) {
                body.release();
                return;
            }
            int code = h.status().code();
            // The peer's sidecar refused it before its app saw it (shed by its concurrency limit, app down...): as
            // safe as a refused stream to retry elsewhere. Not an outlier failure when it is load shedding, and its
            // quick answer must not feed the latency average, or a shedding endpoint would look fast.
            boolean unprocessed = code >= 500 && WmpHeads.has(h, Deadlines.UNPROCESSED_HEADER);
            if (endpoint != null && unprocessed && code != 503) {
                cluster.recordOutcome(endpoint, true); // the app behind it is down: let outlier detection see it
            } else if (endpoint != null && !unprocessed) {
                // Feeds the latency-aware balancer and the learned concurrency limit; a 503 is the upstream shedding.
                endpoint.recordLatency(System.nanoTime() - sentNanos, inFlightAtSend, code == 503);
                cluster.recordOutcome(endpoint, code >= 500);
            }
            if ((unprocessed || isRetriable5xx(code)) && end && canRetry(unprocessed)) {
                // The whole (error) answer is here; drop it and try another endpoint.
                body.release();
                call = null;
                retry();
                return;
            }
            head = h;
            headBody = body;
            headEnd = end;
            leaveOutboundLimit(System.nanoTime() - start, false);
            trace.firstByte(code);
            answered.trySuccess(null);
        }

        @Override
        public void relay() {
            if (finished || head == null) {
                return;
            }
            relayed = true;
            HttpResponse response = head;
            ByteBuf body = headBody;
            head = null;
            headBody = null;
            // Edited through WmpHeads: an answer from WMP keeps its fields in the frame's list (no header map).
            if (!WmpHeads.has(response, "content-length")) {
                if (headEnd) {
                    WmpHeads.set(response, "content-length", Integer.toString(body.readableBytes()));
                } else {
                    WmpHeads.set(response, "transfer-encoding", "chunked");
                }
            }
            if (!keepAlive) {
                WmpHeads.set(response, "connection", "close");
            }
            status = response.status().code();
            if (headEnd && rawCtx != null && pendingAnswer == null && Http1Writer.fits(response, body)) {
                // The usual answer: complete and small. One buffer, one write, past the encoder (which has nothing
                // to frame: the length is set above and the encoder's state stays at the start of a message).
                int n = body.readableBytes();
                traffic.bytesOut(n);
                bytesOut += n;
                rawCtx.writeAndFlush(Http1Writer.message(ctx.alloc(), response, body), rawCtx.voidPromise());
                finish(false);
                return;
            }
            ctx.write(response, ctx.voidPromise());
            writeBody(body, headEnd);
            HttpContent c;
            while (pendingAnswer != null && (c = pendingAnswer.poll()) != null) {
                writeBody(c.content(), c instanceof LastHttpContent);
            }
        }

        @Override
        public void onResponseData(ByteBuf body, boolean end) {
            if (finished) {
                body.release();
                return;
            }
            if (!relayed) {
                // The virtual-thread Collaborator has not relayed the head yet; keep order.
                if (pendingAnswer == null) {
                    pendingAnswer = new ArrayDeque<>(2);
                }
                pendingAnswer.add(end ? new DefaultLastHttpContent(body) : new DefaultHttpContent(body));
                return;
            }
            writeBody(body, end);
        }

        /** Writes an answer body chunk downstream; the upstream gets credit back once the socket took it. */
        private void writeBody(ByteBuf body, boolean end) {
            int n = body.readableBytes();
            traffic.bytesOut(n);
            bytesOut += n;
            if (end) {
                // The last piece goes as the bare buffer, then the shared empty LastHttpContent: the encoder frames
                // a ByteBuf like content (chunked or not), and this spares a DefaultLastHttpContent with its own
                // trailer headers map per answer. The encoder releases both.
                if (n > 0) {
                    ctx.write(body, ctx.voidPromise());
                } else {
                    body.release();
                }
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT, ctx.voidPromise());
                finish(false);
            } else {
                UpstreamCall c = call;
                ctx.writeAndFlush(new DefaultHttpContent(body)).addListener(f -> {
                    if (f.isSuccess() && n > 0) {
                        c.consumed(n);
                    }
                });
            }
        }

        @Override
        public void onReset(String reason, boolean refused) {
            metrics.streamsReset.increment();
            call = null;
            if (!relayed) {
                fail(new UpstreamResetException(reason, refused));
            } else {
                // The answer already started; HTTP/1.1 can only signal truncation by closing.
                finish(true);
            }
        }

        @Override
        public void fail(Throwable cause) {
            if (finished || cause == SUPERSEDED) {
                return;
            }
            // Refused by our own limits (capacity, the connection cap): nothing says the endpoint is unwell.
            boolean endpointFault = endpoint != null && !(cause instanceof Cluster.NoCapacityException)
                    && !(cause instanceof Upstream.CircuitOpenException);
            if (endpointFault) {
                endpoint.recordFailure();
                if (sentNanos != 0) {
                    endpoint.recordLatency(System.nanoTime() - sentNanos, inFlightAtSend, true);
                }
                cluster.recordOutcome(endpoint, true);
            }
            if (cause instanceof Upstream.CircuitOpenException && canRetry(true)) {
                retry(); // nothing was sent: another endpoint may have connections to spare
                return;
            }
            if (cause instanceof Upstream.ConnectException && canRetry(true)) {
                // Nothing was sent (the dial failed), so trying another endpoint cannot duplicate the request.
                // This is what keeps a killed instance from failing requests until its lease expires.
                metrics.connectRetries.increment();
                if (endpoint != null) {
                    endpoint.markUnreachable();
                }
                retry();
                return;
            }
            if (cause instanceof UpstreamResetException r && canRetry(r.refused)) {
                retry();
                return;
            }
            HttpResponseStatus st;
            String kind;
            if (cause instanceof TimeoutException) {
                cluster.countTimeout();
                st = HttpResponseStatus.GATEWAY_TIMEOUT;
                kind = "timeout";
            } else if (cause instanceof Cluster.UnknownServiceException) {
                metrics.unknownService.increment();
                st = HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = "unknown-service";
            } else if (cause instanceof Cluster.NoCapacityException nc) {
                st = HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = nc.kind();
            } else if (cause instanceof Upstream.CircuitOpenException) {
                st = HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = "circuit-open";
            } else if (cause instanceof Upstream.ConnectException) {
                // The local app refusing is a 502 (the app is down); a peer sidecar refusing is a 503 (try later).
                boolean app = direction == ExchangeObserver.Direction.INBOUND;
                st = app ? HttpResponseStatus.BAD_GATEWAY : HttpResponseStatus.SERVICE_UNAVAILABLE;
                kind = app ? "app-unavailable" : "upstream-connect";
            } else {
                st = HttpResponseStatus.BAD_GATEWAY;
                kind = "upstream-reset";
            }
            finished = true;
            // A timeout is the clearest sign of overload the limit can learn from; our own quick 503s are not.
            leaveOutboundLimit(cause instanceof TimeoutException ? System.nanoTime() - start : -1, true);
            cancelCall();
            releaseSlot();
            releasePending();
            traffic.finished(st.code(), start, true);
            trace.end(st.code(), bytesIn, bytesOut, kind);
            boolean close = !requestComplete || !keepAlive;
            var answer = HttpErrors.response(ctx.alloc(), st, kind, cause.getMessage(), close);
            if (cause instanceof Cluster.NoCapacityException || cause instanceof Upstream.CircuitOpenException
                    || cause instanceof Upstream.ConnectException) {
                answer.headers().set(Deadlines.UNPROCESSED_HEADER, "true"); // never sent: safe to retry elsewhere
            }
            ctx.writeAndFlush(answer);
            exchangeDone(this, close);
        }

        private void finish(boolean closeConnection) {
            if (finished) {
                return;
            }
            finished = true;
            if (!requestComplete) {
                cancelCall(); // answered before the request body ended: the upstream connection cannot be reused
            }
            leaveOutboundLimit(-1, false);
            releaseSlot();
            releasePending();
            traffic.finished(status, start, false);
            trace.end(status, bytesIn, bytesOut, closeConnection ? "upstream-reset" : null);
            // An answer that ended before its request body did leaves unread bytes: the connection cannot be reused.
            exchangeDone(this, closeConnection || !keepAlive || !requestComplete);
        }

        private boolean isRetriable5xx(int code) {
            return (code == 502 || code == 503 || code == 504) && policy.retry().retryOn5xx() && idempotent();
        }

        private boolean idempotent() {
            return switch (request.method().name()) {
                case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" -> true;
                default -> false;
            };
        }

        /**
         * A retry is allowed when attempts and the budget remain, the request body can be sent again (empty, or kept
         * whole), and — unless nothing reached the upstream ({@code safe}) — the method is idempotent.
         */
        private boolean canRetry(boolean safe) {
            if (finished || relayed || attempts >= policy.retry().attempts()) {
                return false;
            }
            if (!safe && !idempotent()) {
                return false;
            }
            boolean bodyReplayable = sentNanos == 0 || replayBody != null || (requestComplete && pendingBody.isEmpty() && bytesIn == 0);
            if (!bodyReplayable || !requestComplete && sentNanos != 0) {
                return false;
            }
            if (deadlineNanos != 0 && System.nanoTime() >= deadlineNanos) {
                return false;
            }
            return cluster.retryBudget().tryWithdraw();
        }

        private void retry() {
            attempts++;
            cluster.countRetry();
            lastEndpoint = endpoint != null ? endpoint : lastEndpoint;
            cancelCall();
            releaseSlot();
            if (answered != null) {
                // Ends the previous attempt's Collaborator chain (a virtual thread may be parked on it).
                answered.tryFailure(SUPERSEDED);
            }
            answered = null;
            head = null;
            if (headBody != null) {
                headBody.release();
                headBody = null;
            }
            sentNanos = 0;
            collaborator.carry(this);
        }

        /** The deadline passed before the answer started: cancel upstream (frees its slot there too) and say 504. */
        @Override
        protected void expired() {
            if (finished || relayed) {
                return;
            }
            if (answered != null) {
                answered.tryFailure(new TimeoutException());
            }
            fail(new TimeoutException());
        }

        void abort(String why) {
            if (finished) {
                return;
            }
            finished = true;
            cancelCall(); // frees the upstream's slot at once
            if (answered != null) {
                answered.tryFailure(new UpstreamResetException(why, false));
            }
            leaveOutboundLimit(-1, false);
            releaseSlot();
            releasePending();
            traffic.finished(499, start, false);
            trace.end(499, bytesIn, bytesOut, "downstream-closed");
            current = null;
        }

        private void cancelCall() {
            if (call != null) {
                UpstreamCall c = call;
                call = null;
                c.cancel();
            }
        }

        /**
         * Gives the outbound limit's place back, once: at the answer head (the latency is a sample), or when the
         * exchange ends without one ({@code latencyNanos} negative: no sample).
         */
        private void leaveOutboundLimit(long latencyNanos, boolean dropped) {
            OutboundLimit l = outboundLimit;
            if (l != null) {
                outboundLimit = null;
                l.release(latencyNanos, outboundInFlight, dropped);
            }
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
            while (pendingAnswer != null && (c = pendingAnswer.poll()) != null) {
                c.release();
            }
            if (headBody != null) {
                headBody.release();
                headBody = null;
            }
            if (replayBody != null) {
                replayBody.release();
                replayBody = null;
            }
            cancelDeadline();
        }
    }

    /** Completes an attempt that a retry replaced; its Collaborator chain ignores it. */
    private static final Exception SUPERSEDED = new Exception("superseded by a retry", null, false, false) {};

    /** The request's deadline passed before its answer started. */
    static final class TimeoutException extends Exception {
        TimeoutException() {
            super("no answer within the request's deadline (policy timeout or x-weft-deadline-ms)", null, false, false);
        }
    }

    /** The upstream reset the call, or its connection died, before an answer started. */
    static final class UpstreamResetException extends Exception {
        final boolean refused;

        UpstreamResetException(String message, boolean refused) {
            super("upstream reset before answering: " + message, null, false, false);
            this.refused = refused;
        }
    }
}
