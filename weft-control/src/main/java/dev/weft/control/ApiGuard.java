package dev.weft.control;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.AttributeKey;

import java.net.InetSocketAddress;

/**
 * The control plane's API checks every request's credentials here, before any route handler sees it: a request that
 * may not be made is answered 401 or 403 (JSON, with the reason) and counted in
 * {@code weft_control_refused_total{reason}}; any other passes on untouched. What each route needs is
 * {@link ApiAccess}; who the caller is, {@link ApiCallers}.
 *
 * <p>Local mode: with the embedded store, topology reads from the control plane's own loopback need no credentials,
 * so the quick start on one machine needs no token for {@code ./weft stat}, {@code top} or the dashboard. Span posts
 * from loopback need none whatever the store, so that a Zipkin library, or a sidecar on {@code etcd://} (which holds
 * no credentials of the control plane), on the control plane's host can post. Other writes always need them.
 *
 * <p>Thread: the connection's event loop; shared by all connections (it keeps no per-connection state). Buffers: a
 * request passed on belongs to the next handler; a refused one is released here, and the answer's buffer is owned by
 * the write ({@link JsonAnswers}).
 */
@ChannelHandler.Sharable
final class ApiGuard extends ChannelInboundHandlerAdapter {
    /**
     * The caller of the request being passed on (null when it needed no credentials), for the handlers that decide by
     * who asks ({@link LeaseOwners}). One request at a time reaches the handlers (the pipeline's FlowControlHandler),
     * so the handler reads the caller of its own request.
     */
    static final AttributeKey<ApiCallers.Caller> CALLER = AttributeKey.valueOf("weft-api-caller");

    private final ApiCallers callers;

    ApiGuard(ApiCallers callers) {
        this.callers = callers;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest req) || !req.decoderResult().isSuccess()) {
            ctx.fireChannelRead(msg);   // a malformed request is answered 400 by the handler, which needs no caller
            return;
        }
        ApiAccess.Need need = ApiAccess.of(req.method(), req.uri());
        ctx.channel().attr(CALLER).set(null);
        if (need.kind() == ApiAccess.Kind.OPEN
                || (need.kind() == ApiAccess.Kind.READ && callers.localMode() && fromLoopback(ctx))
                || (need.kind() == ApiAccess.Kind.SPANS && fromLoopback(ctx))) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            String method = req.method().name();
            byte[] body = req.content().isReadable() ? ByteBufUtil.getBytes(req.content()) : new byte[0];
            ApiCallers.Caller caller = callers.authenticate(method, req.uri(), body,
                    req.headers().get(HttpHeaderNames.AUTHORIZATION), describe(need));
            ApiCallers.authorize(need, caller, method, req.uri());
            callers.accepted(caller);
            ctx.channel().attr(CALLER).set(caller);
        } catch (ControlException e) {
            callers.refused(e.code());
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            req.release();
            JsonAnswers.write(ctx, keepAlive, e.status(),
                    ControlJson.bytes(new ControlJson.Error(e.getMessage(), e.code())));
            return;
        }
        ctx.fireChannelRead(msg);
    }

    private static boolean fromLoopback(ChannelHandlerContext ctx) {
        return ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                && a.getAddress().isLoopbackAddress();
    }

    private String describe(ApiAccess.Need need) {
        return switch (need.kind()) {
            case OPEN -> "nothing";
            case READ -> "credentials (it reveals the mesh's topology" + (callers.localMode()
                    ? "; only callers on the control plane's loopback read it without" : "") + ")";
            case SIDECAR -> "a sidecar's credentials or the operator token";
            case SPANS -> "a sidecar's credentials or the operator token (posted spans feed traces and diagnose;"
                    + " only callers on the control plane's loopback post without)";
            case SERVICE -> "the credentials of a sidecar of service '" + need.service() + "' or the operator token";
            case OPERATOR -> "the operator token";
        };
    }
}
