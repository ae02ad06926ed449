package dev.weft.examples;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Serves one incoming consumer connection by calling the provider once per request.
 *
 * <p>Thread: runs on the connection's event loop, which is also the loop of {@link #pool}, so the provider's
 * answer comes back on this thread. Buffers: each request is released here after its data has been retained as the
 * provider call's body (the exchange owns that retained reference); a pipelined request that arrives while one is
 * in flight waits in {@link #queued}, owned by this handler, and is released if the connection closes first. The
 * provider's response body becomes this connection's response body and the encoder releases it.
 */
final class ConsumerHandler extends ChannelInboundHandlerAdapter {
    /**
     * Trace context headers passed on from each request to its provider call, so the provider's side of the call joins
     * the caller's trace (the sidecars write W3C traceparent, and B3 when the caller sent it; tracestate rides along).
     */
    static final List<String> TRACE_HEADERS = List.of("traceparent", "tracestate", "b3", "x-b3-traceid",
            "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags");

    private final ProviderPool pool;
    private final Faults faults;
    private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>();
    private boolean busy;

    ConsumerHandler(ProviderPool pool, Faults faults) {
        this.pool = pool;
        this.faults = faults;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        // One call at a time per connection keeps pipelined answers in request order.
        if (busy) {
            queued.addLast(request);
        } else {
            handle(ctx, request);
        }
    }

    private void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        try {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (!request.decoderResult().isSuccess()) {
                reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.BAD_REQUEST, "malformed HTTP request",
                        false), false);
                return;
            }
            QueryStringDecoder uri = new QueryStringDecoder(request.uri());
            String path = uri.path();
            HttpMethod method = request.method();
            if (path.equals("/health") && method.equals(HttpMethod.GET)) {
                reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.OK, "ok", keepAlive), keepAlive);
            } else if (path.equals("/fault") && method.equals(HttpMethod.POST)) {
                fault(ctx, uri, keepAlive);
            } else if (path.equals("/") && (method.equals(HttpMethod.POST) || method.equals(HttpMethod.GET))
                    && faults.failNow()) {
                reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.INTERNAL_SERVER_ERROR,
                        "injected fault at consumer", keepAlive), keepAlive);
            } else if (path.equals("/") && (method.equals(HttpMethod.POST) || method.equals(HttpMethod.GET))) {
                ByteBuf body = dataOf(ctx, request, uri);
                if (body == null) {
                    reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.BAD_REQUEST,
                            "missing data (expected POST / with the data as body, or GET /?data=...)", keepAlive),
                            keepAlive);
                    return;
                }
                String contentType = request.headers().get(HttpHeaderNames.CONTENT_TYPE, HttpReplies.TEXT);
                busy = true;
                pool.send(new ProviderExchange(body, contentType, traceContext(request), new Answer(ctx, keepAlive)));
            } else {
                reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.NOT_FOUND,
                        "no such path: " + method + " " + path + " (expected POST / or GET /health)", keepAlive),
                        keepAlive);
            }
        } finally {
            request.release();
        }
    }

    /** The request's trace context headers as name, value pairs; null when it has none (no allocation then). */
    private static String[] traceContext(FullHttpRequest request) {
        String[] found = null;
        int n = 0;
        for (String name : TRACE_HEADERS) {
            String value = request.headers().get(name);
            if (value != null) {
                if (found == null) {
                    found = new String[TRACE_HEADERS.size() * 2];
                }
                found[n++] = name;
                found[n++] = value;
            }
        }
        return found;
    }

    /** {@code POST /fault?error-rate=0.2}: this share of requests is answered 500 here, without calling the provider. */
    private void fault(ChannelHandlerContext ctx, QueryStringDecoder uri, boolean keepAlive) {
        for (String name : uri.parameters().keySet()) {
            if (!name.equals("error-rate")) {
                reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.BAD_REQUEST, "unknown fault '" + name
                        + "' (a consumer takes only error-rate=0..1)", keepAlive), keepAlive);
                return;
            }
        }
        List<String> rate = uri.parameters().get("error-rate");
        if (rate != null) {
            try {
                faults.errorRate = Faults.rate(rate.getFirst());
            } catch (IllegalArgumentException e) {
                reply(ctx, HttpReplies.text(ctx.alloc(), HttpResponseStatus.BAD_REQUEST, e.getMessage(), keepAlive),
                        keepAlive);
                return;
            }
        }
        reply(ctx, HttpReplies.of(ctx.alloc(), HttpResponseStatus.OK, HttpReplies.JSON, faults.toJson(), keepAlive),
                keepAlive);
    }

    /** The data as a buffer the caller owns: a retained view of the body, or the {@code data} query parameter. */
    private static ByteBuf dataOf(ChannelHandlerContext ctx, FullHttpRequest request, QueryStringDecoder uri) {
        if (request.content().isReadable()) {
            return request.content().retainedDuplicate();
        }
        List<String> values = uri.parameters().get("data");
        return values == null || values.isEmpty() ? null : ByteBufUtil.writeUtf8(ctx.alloc(), values.getFirst());
    }

    private void reply(ChannelHandlerContext ctx, FullHttpResponse response, boolean keepAlive) {
        busy = false;
        if (!ctx.channel().isActive()) {
            response.release();
            return;
        }
        if (keepAlive) {
            ctx.writeAndFlush(response);
            FullHttpRequest next = queued.pollFirst();
            if (next != null) {
                handle(ctx, next);
            }
        } else {
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        FullHttpRequest request;
        while ((request = queued.pollFirst()) != null) {
            request.release();
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    /** Turns the provider's answer (or the failure to get one) into this connection's response. */
    private final class Answer implements ProviderExchange.Callback {
        private final ChannelHandlerContext ctx;
        private final boolean keepAlive;

        Answer(ChannelHandlerContext ctx, boolean keepAlive) {
            this.ctx = ctx;
            this.keepAlive = keepAlive;
        }

        @Override
        public void onResponse(FullHttpResponse fromProvider) {
            // The provider's body moves into our response; fromProvider holds nothing else that needs releasing.
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, fromProvider.status(),
                    fromProvider.content());
            String contentType = fromProvider.headers().get(HttpHeaderNames.CONTENT_TYPE);
            if (contentType != null) {
                response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
            }
            String provider = fromProvider.headers().get("x-provider");
            if (provider != null) {
                response.headers().set("x-provider", provider);
            }
            // A sidecar's own error names its kind; passed on so the caller can tell it from the provider's status.
            String meshError = fromProvider.headers().get("x-weft-error");
            if (meshError != null) {
                response.headers().set("x-weft-error", meshError);
            }
            HttpUtil.setContentLength(response, response.content().readableBytes());
            if (!keepAlive) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
            reply(ctx, response, keepAlive);
        }

        @Override
        public void onFailure(HttpResponseStatus status, String reason) {
            reply(ctx, HttpReplies.text(ctx.alloc(), status, "consumer: " + reason, keepAlive), keepAlive);
        }
    }
}
