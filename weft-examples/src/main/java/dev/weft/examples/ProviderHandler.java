package dev.weft.examples;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Serves one provider connection.
 *
 * <p>Thread: everything here runs on the connection's event loop, including the delay timers, so the fields need
 * no locking. Buffers: {@link SimpleChannelInboundHandler} releases each request after {@link #channelRead0}; the
 * data is copied out as a String first, so no buffer is held across the delay. Responses are built only when they
 * are written and the encoder releases them.
 *
 * <p>HTTP/1.1 lets a client pipeline requests, and a 503 is ready before an earlier delayed answer, so answers wait
 * in {@link #replies} and leave strictly in request order.
 */
final class ProviderHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final ProviderServer server;
    private final ArrayDeque<Reply> replies = new ArrayDeque<>();

    ProviderHandler(ProviderServer server) {
        this.server = server;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        if (!request.decoderResult().isSuccess()) {
            enqueue(ctx, Reply.now(HttpResponseStatus.BAD_REQUEST, "malformed HTTP request", false));
            return;
        }
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        String path = uri.path();
        HttpMethod method = request.method();
        if (path.equals("/health") && method.equals(HttpMethod.GET)) {
            enqueue(ctx, Reply.now(HttpResponseStatus.OK, "ok", keepAlive));
        } else if (path.equals("/stats") && method.equals(HttpMethod.GET)) {
            enqueue(ctx, Reply.json(server.stats().toJson(), keepAlive));
        } else if (path.equals("/fault")) {
            fault(ctx, uri, method, keepAlive);
        } else if (path.equals("/") && (method.equals(HttpMethod.POST) || method.equals(HttpMethod.GET))) {
            String data = dataOf(request, uri);
            if (data == null) {
                enqueue(ctx, Reply.now(HttpResponseStatus.BAD_REQUEST,
                        "missing data (expected POST / with the data as body, or GET /?data=...)", keepAlive));
            } else {
                compute(ctx, data, keepAlive);
            }
        } else if (path.equals("/") || path.equals("/health") || path.equals("/stats")) {
            enqueue(ctx, Reply.now(HttpResponseStatus.METHOD_NOT_ALLOWED,
                    "method " + method + " not allowed on " + path, keepAlive));
        } else {
            enqueue(ctx, Reply.now(HttpResponseStatus.NOT_FOUND,
                    "no such path: " + path + " (expected /, /health or /stats)", keepAlive));
        }
    }

    /** Sets injected faults: {@code POST /fault?factor=10&extra-delay-ms=0&error-rate=0.1&stall=true&crash=true}. */
    private void fault(ChannelHandlerContext ctx, QueryStringDecoder uri, HttpMethod method, boolean keepAlive) {
        Faults f = server.faults();
        if (method.equals(HttpMethod.POST)) {
            try {
                var p = uri.parameters();
                if (p.containsKey("crash") && Boolean.parseBoolean(p.get("crash").getFirst())) {
                    Runtime.getRuntime().halt(137); // like kill -9: no answer, no cleanup
                }
                if (p.containsKey("factor")) {
                    f.factor = Double.parseDouble(p.get("factor").getFirst());
                }
                if (p.containsKey("extra-delay-ms")) {
                    f.extraDelayMs = Long.parseLong(p.get("extra-delay-ms").getFirst());
                }
                if (p.containsKey("error-rate")) {
                    f.errorRate = Double.parseDouble(p.get("error-rate").getFirst());
                }
                if (p.containsKey("stall")) {
                    f.stall = Boolean.parseBoolean(p.get("stall").getFirst());
                }
            } catch (NumberFormatException e) {
                enqueue(ctx, Reply.now(HttpResponseStatus.BAD_REQUEST, "bad fault parameter: " + e.getMessage()
                        + " (expected factor=NUMBER, extra-delay-ms=N, error-rate=0..1, stall=true|false, crash=true)", keepAlive));
                return;
            }
        }
        enqueue(ctx, Reply.json(f.toJson(), keepAlive));
    }

    private void compute(ChannelHandlerContext ctx, String data, boolean keepAlive) {
        Faults faults = server.faults();
        if (faults.failNow()) {
            enqueue(ctx, Reply.now(HttpResponseStatus.INTERNAL_SERVER_ERROR, "injected fault at provider "
                    + server.settings().name(), keepAlive));
            return;
        }
        if (!server.tryAdmit()) {
            enqueue(ctx, Reply.now(HttpResponseStatus.SERVICE_UNAVAILABLE, "provider " + server.settings().name()
                    + " is at its limit of " + server.settings().maxConcurrency() + " requests in flight", keepAlive));
            return;
        }
        Reply reply = new Reply(keepAlive);
        reply.admitted = true;
        replies.addLast(reply);
        String hash = String.valueOf(data.hashCode());
        if (faults.stall) {
            return; // admitted and never answered: holds its slot, as a hung instance would
        }
        reply.timer = ctx.executor().schedule(() -> {
            server.finished();
            reply.complete(HttpResponseStatus.OK, HttpReplies.TEXT, hash);
            flush(ctx);
        }, faults.delayNanos(server.settings().delay().toNanos()), TimeUnit.NANOSECONDS);
    }

    private static String dataOf(FullHttpRequest request, QueryStringDecoder uri) {
        if (request.content().isReadable()) {
            return request.content().toString(StandardCharsets.UTF_8);
        }
        List<String> values = uri.parameters().get("data");
        return values == null || values.isEmpty() ? null : values.getFirst();
    }

    private void enqueue(ChannelHandlerContext ctx, Reply reply) {
        replies.addLast(reply);
        flush(ctx);
    }

    /** Writes every answer that is ready and not waiting behind an earlier one. */
    private void flush(ChannelHandlerContext ctx) {
        boolean wrote = false;
        while (!replies.isEmpty() && replies.peekFirst().ready) {
            Reply reply = replies.pollFirst();
            FullHttpResponse response = HttpReplies.of(ctx.alloc(), reply.status, reply.contentType, reply.body,
                    reply.keepAlive);
            response.headers().set("x-provider", server.settings().name());
            wrote = true;
            if (!reply.keepAlive) {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
                abandonPending();
                return;
            }
            ctx.write(response);
        }
        if (wrote) {
            ctx.flush();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        abandonPending();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A reset from a client that gave up is routine under load; the connection is done either way.
        ctx.close();
    }

    /**
     * Frees the slots of answers nobody will read; a timer that already fired has freed its own. A stalled request
     * has no timer and is freed here too: the caller closing the connection is what cancellation looks like to an
     * app, and a cancelled request must not hold a slot for ever.
     */
    private void abandonPending() {
        for (Reply reply : replies) {
            if (reply.admitted && (reply.timer == null || reply.timer.cancel(false))) {
                server.abandoned();
            }
        }
        replies.clear();
    }

    /** One answer owed to the client, in request order. Holds no buffer: the response is built when written. */
    private static final class Reply {
        final boolean keepAlive;
        boolean ready;
        HttpResponseStatus status;
        String contentType;
        String body;
        ScheduledFuture<?> timer;
        /** Holds one of the provider's slots until its timer fires or the connection closes. */
        boolean admitted;

        Reply(boolean keepAlive) {
            this.keepAlive = keepAlive;
        }

        static Reply now(HttpResponseStatus status, String body, boolean keepAlive) {
            Reply reply = new Reply(keepAlive);
            reply.complete(status, HttpReplies.TEXT, body);
            return reply;
        }

        static Reply json(String body, boolean keepAlive) {
            Reply reply = new Reply(keepAlive);
            reply.complete(HttpResponseStatus.OK, HttpReplies.JSON, body);
            return reply;
        }

        void complete(HttpResponseStatus status, String contentType, String body) {
            this.status = status;
            this.contentType = contentType;
            this.body = body;
            this.ready = true;
        }
    }
}
