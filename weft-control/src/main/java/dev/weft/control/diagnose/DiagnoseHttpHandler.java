package dev.weft.control.diagnose;

import dev.weft.control.JsonAnswers;
import dev.weft.control.RouteHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;

/**
 * Routes {@code GET /v1/diagnose} to {@link DiagnoseApi}; every other request passes on down the pipeline (to the
 * registry API). A handler of its own, as the policy API is, so the registry's handler needs no change for it.
 *
 * <p>Thread: the connection's event loop; the answer arrives on the diagnose thread and hops back here through
 * {@code ctx.executor()}. Buffers: a request for this route is released here once its parameters are read; the
 * response buffer is allocated and written on the event loop, and the encoder releases it. One request at a time, as
 * in the other handlers: auto-read is off until the answer is queued.
 */
public final class DiagnoseHttpHandler extends RouteHandler {
    static final String PATH = "/v1/diagnose";

    private final DiagnoseApi api;

    public DiagnoseHttpHandler(DiagnoseApi api) {
        this.api = api;
    }

    @Override
    protected boolean serves(String path) {
        return path.equals(PATH);
    }

    @Override
    protected void handle(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        boolean keepAlive;
        Map<String, String> params = new HashMap<>();
        boolean get;
        try {
            keepAlive = HttpUtil.isKeepAlive(req);
            get = req.method().equals(HttpMethod.GET);
            uri.parameters().forEach((k, v) -> params.put(k, v.isEmpty() ? "" : v.getFirst()));
        } finally {
            req.release();
        }
        ctx.channel().config().setAutoRead(false);
        if (!get) {
            write(ctx, keepAlive, DiagnoseApi.error(405, "method-not-allowed", "only GET " + PATH
                    + "?window=30s&baseline=5m is served here"));
            return;
        }
        api.handle(params).whenComplete((answer, failure) -> {
            DiagnoseApi.Answer a = failure == null ? answer
                    : DiagnoseApi.error(500, "internal", "diagnosis failed: " + failure);
            try {
                ctx.executor().execute(() -> write(ctx, keepAlive, a));
            } catch (RejectedExecutionException e) {
                // The event loop is shutting down with the server; the connection is going away anyway.
            }
        });
    }

    private static void write(ChannelHandlerContext ctx, boolean keepAlive, DiagnoseApi.Answer a) {
        JsonAnswers.write(ctx, keepAlive, a.status(), a.json());
    }
}
