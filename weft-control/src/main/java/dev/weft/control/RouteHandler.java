package dev.weft.control;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;

/**
 * A handler of the control plane's pipeline that serves some paths (the policies, culprit finding, the dashboard)
 * and passes every other request on, untouched, to the next one (in the end the registry API).
 *
 * <p>Thread: the connection's event loop. Buffers: a request passed on is the next handler's; a request this handler
 * takes is {@link #handle}'s to release.
 */
public abstract class RouteHandler extends ChannelInboundHandlerAdapter {

    /** Whether this handler serves {@code path} (decoded, without the query). */
    protected abstract boolean serves(String path);

    /** Answers a request for a path it {@link #serves}; must release {@code req}. */
    protected abstract void handle(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri);

    @Override
    public final void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof FullHttpRequest req) {
            QueryStringDecoder uri = new QueryStringDecoder(req.uri());
            if (serves(uri.path())) {
                handle(ctx, req, uri);
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }
}
