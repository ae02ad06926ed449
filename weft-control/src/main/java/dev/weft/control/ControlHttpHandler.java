package dev.weft.control;

import dev.weft.control.ca.CertificateAuthority;
import dev.weft.control.trace.TraceApi;
import dev.weft.registry.Endpoint;
import dev.weft.registry.ServiceNames;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Serves the control plane's HTTP/1.1 JSON API on one connection (one instance per channel).
 *
 * <p>Threading: every method runs on the connection's event loop, except the completions of store operations,
 * which run on the store thread and only encode JSON into a {@code byte[]} before hopping back here. So every
 * ByteBuf of this class is allocated and written on the event loop, and nothing here waits on the store or disk.
 *
 * <p>Buffers: the aggregated request is released by {@link SimpleChannelInboundHandler} when
 * {@link #channelRead0} returns; its body is copied into a String before that. Each response buffer is passed to
 * {@code ctx.write}, which owns it from then on and releases it after writing or on failure. Pending watch lines
 * are kept as {@code byte[]}, never as ByteBufs, so a closed channel cannot leak one.
 *
 * <p>One request at a time: auto-read is switched off while a request is with the store and back on once its
 * response is queued, so responses leave in request order even if a client pipelines. A watch turns the connection
 * into a one-way stream of NDJSON lines until either side closes it.
 */
final class ControlHttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final System.Logger LOG = System.getLogger(ControlHttpHandler.class.getName());
    private static final Pattern ENDPOINT_ID = Pattern.compile("[A-Za-z0-9\\[][A-Za-z0-9._:@\\[\\]-]{0,252}");
    private static final byte[] HEARTBEAT = ControlJson.line(new ControlJson.Heartbeat("heartbeat"));
    static final String API_PREFIX = "/api/";
    private static final String ROUTES = "GET /metrics, GET /v1/health, PUT /v1/leases, GET /v1/leases, DELETE /v1/leases/{id},"
            + " PUT /v1/leases/{id}/keepalive, GET /v1/services, GET /v1/services/{service},"
            + " PUT|DELETE /v1/services/{service}/endpoints/{id}, GET /v1/watch/{service}?revision=N, "
            + IdentityApi.ROUTES + ", GET /v1/diagnose, GET /ui/ (the dashboard) and /v1/ui/...";

    private final ControlBackend store;
    private final Duration heartbeatInterval;
    /** Span collection and trace queries under /api/v2; null when the control plane collects no spans. */
    private final TraceApi traces;
    /** The identity routes' CA ({@link IdentityApi}); null when the control plane runs none. */
    private final CertificateAuthority authority;
    /** The dashboard's lines for /metrics ({@code UiApi.metricsText}). */
    private final java.util.function.Supplier<String> dashboardMetrics;
    /** Who may renew, revoke and bind to each lease; shared by every connection. */
    private final LeaseOwners leaseOwners;

    // Watch state; set once the connection becomes a watch stream.
    private String watchedService;
    private ControlBackend.WatchSink sink;
    private ScheduledFuture<?> heartbeat;
    private byte[] pendingSnapshot;

    ControlHttpHandler(ControlBackend store, Duration heartbeatInterval, TraceApi traces,
                       CertificateAuthority authority, java.util.function.Supplier<String> dashboardMetrics,
                       LeaseOwners leaseOwners) {
        super(FullHttpRequest.class, true);
        this.dashboardMetrics = dashboardMetrics;
        this.leaseOwners = leaseOwners;
        this.store = store;
        this.heartbeatInterval = heartbeatInterval;
        this.traces = traces;
        this.authority = authority;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (watchedService != null) {
            // A watch owns the connection until it closes; another request here is a client bug.
            ctx.close();
            return;
        }
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        if (!req.decoderResult().isSuccess()) {
            writeError(ctx, ControlException.badRequest("malformed HTTP request: " + req.decoderResult().cause()),
                    false);
            return;
        }
        QueryStringDecoder uri = new QueryStringDecoder(req.uri());
        if (uri.path().startsWith(API_PREFIX)) {
            ctx.channel().config().setAutoRead(false);
            traceApi(ctx, req, uri, keepAlive);
            return;
        }
        if (uri.path().equals("/metrics")) {
            writeMetrics(ctx, req.method(), keepAlive);
            return;
        }
        String body = req.content().toString(StandardCharsets.UTF_8);
        ctx.channel().config().setAutoRead(false);
        try {
            route(ctx, req.method(), uri, body, keepAlive, ctx.channel().attr(ApiGuard.CALLER).get());
        } catch (ControlException e) {
            writeError(ctx, e, keepAlive);
        }
    }

    /** @param caller who sent the request, as {@link ApiGuard} proved it; null if it needed no credentials */
    private void route(ChannelHandlerContext ctx, HttpMethod method, QueryStringDecoder uri, String body,
                       boolean keepAlive, ApiCallers.Caller caller) {
        List<String> p = segments(uri.rawPath());
        String path = uri.path();
        if (p.size() < 2 || !p.get(0).equals("v1")) {
            throw notFound(method, path);
        }
        if (IdentityApi.handles(p.get(1))) {
            reply(ctx, IdentityApi.handle(authority, method, p, body),
                    Function.identity(), keepAlive);
            return;
        }
        switch (p.get(1)) {
            case "health" -> {
                if (p.size() != 2) throw notFound(method, path);
                allow(method, path, HttpMethod.GET);
                reply(ctx, store.counts(), n -> ControlJson.Health.of(store.connectivity(), n), keepAlive);
            }
            case "leases" -> {
                if (p.size() == 2) {
                    allow(method, path, HttpMethod.GET, HttpMethod.PUT, HttpMethod.POST);
                    if (method.equals(HttpMethod.GET)) {
                        reply(ctx, store.leases(), ControlJson.LeaseList::new, keepAlive);
                    } else {
                        ControlJson.LeaseRequest r = ControlJson.parse(body, ControlJson.LeaseRequest.class,
                                "{\"ttlMillis\": 3000}");
                        if (r.ttlMillis() == null) {
                            throw ControlException.badRequest("missing field 'ttlMillis' (expected e.g. {\"ttlMillis\": 3000})");
                        }
                        // A sidecar's service (null for the operator), kept with the lease in the store.
                        String owner = caller == null ? null : caller.service();
                        reply(ctx, store.grantLease(r.ttlMillis(), owner).thenApply(g -> {
                            leaseOwners.granted(g.leaseId(), owner);
                            return g;
                        }), Function.identity(), keepAlive);
                    }
                } else if (p.size() == 3) {
                    allow(method, path, HttpMethod.DELETE);
                    String id = p.get(2);
                    reply(ctx, leaseOwners.check(caller, id, "revoke", false)
                            .thenCompose(v -> store.revokeLease(id))
                            .thenRun(() -> leaseOwners.revoked(id)), v -> Map.of("leaseId", id, "revoked", true),
                            keepAlive);
                } else if (p.size() == 4 && p.get(3).equals("keepalive")) {
                    allow(method, path, HttpMethod.PUT, HttpMethod.POST);
                    String id = p.get(2);
                    reply(ctx, leaseOwners.check(caller, id, "renew", false).thenCompose(v -> store.keepAlive(id)),
                            Function.identity(), keepAlive);
                } else {
                    throw notFound(method, path);
                }
            }
            case "services" -> {
                if (p.size() == 2) {
                    allow(method, path, HttpMethod.GET);
                    reply(ctx, store.services(), Function.identity(), keepAlive);
                } else if (p.size() == 3) {
                    allow(method, path, HttpMethod.GET);
                    reply(ctx, store.snapshot(service(p.get(2))), ControlJson.SnapshotMessage::of, keepAlive);
                } else if (p.size() == 5 && p.get(3).equals("endpoints")) {
                    allow(method, path, HttpMethod.PUT, HttpMethod.DELETE);
                    String service = service(p.get(2));
                    String id = endpointId(p.get(4));
                    if (method.equals(HttpMethod.DELETE)) {
                        reply(ctx, store.deleteEndpoint(service, id), ControlJson.SnapshotMessage::of, keepAlive);
                    } else {
                        ControlJson.EndpointRequest r = ControlJson.parse(body, ControlJson.EndpointRequest.class,
                                "{\"host\": \"127.0.0.1\", \"port\": 7001, \"weight\": 1, \"capacity\": 0,"
                                        + " \"metadata\": {}, \"leaseId\": \"...\"}");
                        Endpoint endpoint = endpoint(service, id, r);
                        reply(ctx, leaseOwners.check(caller, r.leaseId(), "bind an endpoint to", true)
                                .thenCompose(v -> store.putEndpoint(endpoint, r.leaseId())),
                                ControlJson.SnapshotMessage::of, keepAlive);
                    }
                } else {
                    throw notFound(method, path);
                }
            }
            case "watch" -> {
                if (p.size() != 3) throw notFound(method, path);
                allow(method, path, HttpMethod.GET);
                startWatch(ctx, service(p.get(2)), revisionParam(uri));
            }
            default -> throw notFound(method, path);
        }
    }

    /**
     * The Zipkin-compatible span API ({@link TraceApi}). The body is copied out of the request (which is released
     * when channelRead0 returns); the answer comes back from the spans thread as bytes and is written here.
     */
    private void traceApi(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, boolean keepAlive) {
        if (traces == null) {
            writeError(ctx, new ControlException(404, "not-found", "this control plane collects no spans"
                    + " (started with --trace-store-spans 0)"), keepAlive);
            return;
        }
        List<String> p = segments(uri.rawPath());
        if (p.size() < 3 || !p.get(1).equals("v2")) {
            writeError(ctx, new ControlException(404, "not-found", "no route for " + req.method() + " " + uri.path()
                    + " (the trace API is under /api/v2, e.g. GET /api/v2/traces)"), keepAlive);
            return;
        }
        Map<String, String> params = new java.util.HashMap<>();
        uri.parameters().forEach((k, v) -> params.put(k, v.isEmpty() ? "" : v.getFirst()));
        byte[] body = io.netty.buffer.ByteBufUtil.getBytes(req.content());
        // A sidecar's post keeps only its own service's spans; the operator's (service null) and a loopback one (no
        // caller) keep all.
        ApiCallers.Caller caller = ctx.channel().attr(ApiGuard.CALLER).get();
        traces.handle(req.method().name(), p.subList(2, p.size()), params, body,
                        req.headers().get(HttpHeaderNames.CONTENT_ENCODING), caller == null ? null : caller.service())
                .whenComplete((answer, error) -> {
                    TraceApi.Answer a = error == null ? answer : new TraceApi.Answer(500,
                            ControlJson.bytes(new ControlJson.Error("internal error: " + error, "internal")));
                    onEventLoop(ctx, () -> write(ctx, HttpResponseStatus.valueOf(a.status()), a.json(), keepAlive));
                });
    }

    private static Endpoint endpoint(String service, String id, ControlJson.EndpointRequest r) {
        if (r.service() != null && !r.service().equals(service)) {
            throw ControlException.badRequest("body says service '" + r.service() + "' but the path says '"
                    + service + "' (expected the same, or leave it out of the body)");
        }
        if (r.id() != null && !r.id().equals(id)) {
            throw ControlException.badRequest("body says id '" + r.id() + "' but the path says '" + id
                    + "' (expected the same, or leave it out of the body)");
        }
        if (r.leaseId() == null || r.leaseId().isBlank()) {
            throw ControlException.badRequest("missing field 'leaseId' (take a lease with PUT /v1/leases first;"
                    + " endpoints live only as long as their lease)");
        }
        if (r.host() == null || r.host().isBlank()) {
            throw ControlException.badRequest("missing field 'host' (expected e.g. \"127.0.0.1\")");
        }
        if (r.port() == null) {
            throw ControlException.badRequest("missing field 'port' (expected 1-65535)");
        }
        try {
            return new Endpoint(service, id, r.host(), r.port(), r.weight() == null ? 1 : r.weight(),
                    r.capacity() == null ? 0 : r.capacity(), r.metadata());
        } catch (IllegalArgumentException | NullPointerException e) {
            throw ControlException.badRequest("invalid endpoint: " + e.getMessage());
        }
    }

    private static long revisionParam(QueryStringDecoder uri) {
        List<String> values = uri.parameters().get("revision");
        if (values == null || values.isEmpty() || values.getFirst().isEmpty()) {
            return -1;
        }
        try {
            long revision = Long.parseLong(values.getFirst());
            if (revision >= 0) {
                return revision;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw ControlException.badRequest("invalid revision '" + values.getFirst()
                + "' (expected a revision number >= 0 from an earlier snapshot, or no revision parameter)");
    }

    /**
     * Prometheus text: whether the store answers and how many API operations it failed, so an operator can alert on
     * an etcd outage seen from the control plane. Answered from local counters: it works while the store is away.
     */
    private void writeMetrics(ChannelHandlerContext ctx, HttpMethod method, boolean keepAlive) {
        if (!method.equals(HttpMethod.GET)) {
            writeError(ctx, new ControlException(405, "method-not-allowed", "method " + method
                    + " not allowed on /metrics (allowed: GET)"), keepAlive);
            return;
        }
        ControlBackend.Connectivity c = store.connectivity();
        String label = "{backend=\"" + c.backend() + "\"}";
        String text = "# HELP weft_control_registry_up Whether the control plane's store took its last operation.\n"
                + "# TYPE weft_control_registry_up gauge\n"
                + "weft_control_registry_up" + label + " " + (c.connected() ? 1 : 0) + "\n"
                + "# HELP weft_control_registry_errors_total API operations that failed because the store did not"
                + " take them (etcd unreachable, disk full).\n"
                + "# TYPE weft_control_registry_errors_total counter\n"
                + "weft_control_registry_errors_total" + label + " " + c.errors() + "\n"
                + (authority == null ? "" : authority.metricsText()) + (traces == null ? "" : traces.metricsText())
                + dashboardMetrics.get();
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(bytes));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        HttpUtil.setKeepAlive(response, keepAlive);
        ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
                : ChannelFutureListener.CLOSE);
    }

    // --- unary replies ---

    /** Sends {@code result}, mapped to its JSON body, once the store completes it. */
    private <T> void reply(ChannelHandlerContext ctx, CompletableFuture<T> result, Function<? super T, ?> body,
                           boolean keepAlive) {
        result.whenComplete((value, error) -> {
            // Runs on the store thread (or here, if already complete): encode only, then hop to the event loop.
            byte[] json = null;
            HttpResponseStatus status = HttpResponseStatus.OK;
            Throwable failure = error;
            if (failure == null) {
                try {
                    json = ControlJson.bytes(body.apply(value));
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            if (failure != null) {
                ControlException e = asControlException(failure);
                status = HttpResponseStatus.valueOf(e.status());
                json = ControlJson.bytes(new ControlJson.Error(e.getMessage(), e.code()));
            }
            HttpResponseStatus finalStatus = status;
            byte[] finalJson = json;
            onEventLoop(ctx, () -> write(ctx, finalStatus, finalJson, keepAlive));
        });
    }

    private static ControlException asControlException(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof ControlException ce) {
            return ce;
        }
        LOG.log(System.Logger.Level.ERROR, "request failed", cause);
        return new ControlException(500, "internal", "internal error: " + cause);
    }

    private void writeError(ChannelHandlerContext ctx, ControlException e, boolean keepAlive) {
        write(ctx, HttpResponseStatus.valueOf(e.status()),
                ControlJson.bytes(new ControlJson.Error(e.getMessage(), e.code())), keepAlive);
    }

    private void write(ChannelHandlerContext ctx, HttpResponseStatus status, byte[] json, boolean keepAlive) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(json));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, json.length);
        HttpUtil.setKeepAlive(response, keepAlive);
        if (keepAlive) {
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            ctx.channel().config().setAutoRead(true);
        } else {
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }

    // --- watch streams ---

    private void startWatch(ChannelHandlerContext ctx, String service, long sinceRevision) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "application/x-ndjson; charset=utf-8")
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        HttpUtil.setTransferEncodingChunked(head, true);
        watchedService = service;
        // Written before subscribing: lines reach this event loop as later tasks, so they always follow the head.
        ctx.writeAndFlush(head).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        // Read again so a client that goes away is noticed at once (EOF) rather than at the next failed write.
        ctx.channel().config().setAutoRead(true);
        long every = heartbeatInterval.toMillis();
        heartbeat = ctx.executor().scheduleAtFixedRate(() -> writeLine(ctx, HEARTBEAT, false), every, every,
                TimeUnit.MILLISECONDS);
        sink = line -> onEventLoop(ctx, () -> writeLine(ctx, line, true));
        store.subscribe(service, sinceRevision, sink).whenComplete((v, error) -> {
            if (error != null) {
                onEventLoop(ctx, ctx::close);
            }
        });
    }

    /**
     * Writes a line now if the socket keeps up. A client that does not read only ever needs the newest snapshot
     * (each one is complete), so older unsent ones are replaced rather than queued without bound, and heartbeats
     * are skipped.
     */
    private void writeLine(ChannelHandlerContext ctx, byte[] line, boolean snapshot) {
        if (!ctx.channel().isActive()) {
            return;
        }
        if (ctx.channel().isWritable()) {
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(line)))
                    .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        } else if (snapshot) {
            pendingSnapshot = line;
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (pendingSnapshot != null && ctx.channel().isWritable()) {
            byte[] line = pendingSnapshot;
            pendingSnapshot = null;
            writeLine(ctx, line, true);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        if (sink != null) {
            store.unsubscribe(watchedService, sink);
        }
        pendingSnapshot = null;
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Mostly peers resetting connections (a killed sidecar); nothing to answer.
        LOG.log(System.Logger.Level.DEBUG, "closing control connection " + ctx.channel(), cause);
        ctx.close();
    }

    // --- helpers ---

    private static void onEventLoop(ChannelHandlerContext ctx, Runnable task) {
        try {
            ctx.executor().execute(task);
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down with the server; the connection is going away anyway.
        }
    }

    private static List<String> segments(String rawPath) {
        return ApiAccess.segments(rawPath);
    }

    private static String service(String name) {
        if (!ServiceNames.isValid(name)) {
            throw ControlException.badRequest("invalid service name '" + name + "' (expected " + ServiceNames.RULE + ")");
        }
        return name;
    }

    private static String endpointId(String id) {
        if (!ENDPOINT_ID.matcher(id).matches()) {
            throw ControlException.badRequest("invalid endpoint id '" + id
                    + "' (expected letters, digits and . _ - : @ [ ], e.g. provider-1 or 10.0.0.5:7001)");
        }
        return id;
    }

    static void allow(HttpMethod method, String path, HttpMethod... allowed) {
        for (HttpMethod m : allowed) {
            if (m.equals(method)) {
                return;
            }
        }
        List<String> names = new ArrayList<>();
        for (HttpMethod m : allowed) {
            names.add(m.name());
        }
        throw new ControlException(405, "method-not-allowed", "method " + method + " not allowed on " + path
                + " (allowed: " + String.join(", ", names) + ")");
    }

    private static ControlException notFound(HttpMethod method, String path) {
        return new ControlException(404, "not-found", "no route for " + method + " " + path + " (routes: "
                + ROUTES + ")");
    }
}
