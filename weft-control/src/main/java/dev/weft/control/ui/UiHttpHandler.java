package dev.weft.control.ui;

import dev.weft.control.RouteHandler;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
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

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * The operator's dashboard on the control plane's listener: the page and its assets under {@code /ui/} (from the
 * jar, {@link UiAssets}) and the JSON it polls under {@code /v1/ui/} ({@link UiApi}). Other paths pass on to the
 * policy and registry handlers untouched.
 *
 * <p>Thread: the connection's event loop. Most answers are built here from the history's last tick (small, bounded
 * copies); the two that wait on something (the policy documents from the store, a sidecar's {@code /config} read on a
 * virtual thread) complete elsewhere and hop back through {@code ctx.executor()}, with auto-read off meanwhile so a
 * pipelining client gets its answers in order. Buffers: the request is released here once handled; each response
 * buffer belongs to the encoder once written.
 */
public final class UiHttpHandler extends RouteHandler {
    static final String PAGE_PREFIX = "/ui";
    static final String API_PREFIX = "/v1/ui/";

    private final UiApi api;

    public UiHttpHandler(UiApi api) {
        this.api = api;
    }

    @Override
    protected boolean serves(String path) {
        return path.equals(PAGE_PREFIX) || path.startsWith(PAGE_PREFIX + "/") || path.startsWith(API_PREFIX);
    }

    @Override
    protected void handle(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        String path = uri.path();
        boolean page = !path.startsWith(API_PREFIX);
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        HttpMethod method = req.method();
        req.release();
        if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.HEAD)) {
            write(ctx, keepAlive, UiApi.Answer.error(405, "method-not-allowed", "method " + method
                    + " not allowed on " + path + " (allowed: GET)"));
            return;
        }
        if (page) {
            write(ctx, keepAlive, UiAssets.answer(path));
            return;
        }
        CompletableFuture<UiApi.Answer> answer = api.handle(path.substring(API_PREFIX.length()), uri.parameters());
        if (answer.isDone()) {
            write(ctx, keepAlive, answer.join());
            return;
        }
        ctx.channel().config().setAutoRead(false);
        answer.whenComplete((a, error) -> onEventLoop(ctx, () -> {
            write(ctx, keepAlive, error == null ? a : UiApi.Answer.error(502, "unavailable", String.valueOf(
                    error.getCause() != null ? error.getCause().getMessage() : error.getMessage())));
            ctx.channel().config().setAutoRead(true);
        }));
    }

    private static void write(ChannelHandlerContext ctx, boolean keepAlive, UiApi.Answer a) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(a.status()), Unpooled.wrappedBuffer(a.body()));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, a.contentType())
                .setInt(HttpHeaderNames.CONTENT_LENGTH, a.body().length)
                // Live pages: every poll must reach the control plane, and assets change with the jar.
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set("X-Content-Type-Options", "nosniff")
                // Only the control plane's own files and JSON, never framed: the page shows what registrations say
                // (names, policy text), and this keeps anything in them from loading or running elsewhere.
                .set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
        if (a.location() != null) {
            response.headers().set(HttpHeaderNames.LOCATION, a.location());
        }
        HttpUtil.setKeepAlive(response, keepAlive);
        ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
                : ChannelFutureListener.CLOSE);
    }

    private static void onEventLoop(ChannelHandlerContext ctx, Runnable task) {
        try {
            ctx.executor().execute(task);
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down with the server; the connection is going away anyway.
        }
    }
}
