package dev.weft.dataplane.inbound;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;

/**
 * One keep-alive connection to the local app, used by at most one exchange at a time. Passes what the app answers
 * to the exchange that owns the connection.
 *
 * <p>Thread: the connection's Worker loop. Buffers: messages read are handed to the owning exchange, which then
 * owns them; with no owner (a late or stray answer) they are released here.
 */
final class AppConnection extends ChannelInboundHandlerAdapter {

    /** What an exchange must handle while it owns the connection. */
    interface Owner {
        void onAppHead(HttpResponse response);

        void onAppContent(HttpContent content);

        void onAppReadComplete();

        void onAppWritable();

        void onAppClosed();
    }

    private final AppPool pool;
    private Channel channel;
    private Owner owner;

    AppConnection(AppPool pool) {
        this.pool = pool;
    }

    Channel channel() {
        return channel;
    }

    void owner(Owner owner) {
        this.owner = owner;
    }

    /** The owner is done: back to the pool if the exchange left the connection in a clean state. */
    void release(boolean reusable) {
        owner = null;
        channel.config().setAutoRead(true);
        pool.release(this, reusable);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Owner o = owner;
        if (o == null) {
            ReferenceCountUtil.release(msg);
            ctx.close(); // an answer nobody asked for: the connection's framing is no longer trustworthy
            return;
        }
        if (msg instanceof HttpResponse r) {
            o.onAppHead(r);
        }
        if (msg instanceof HttpContent c) {
            if (owner != null) {
                owner.onAppContent(c);
            } else {
                c.release();
            }
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (owner != null) {
            owner.onAppReadComplete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (owner != null && ctx.channel().isWritable()) {
            owner.onAppWritable();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            if (owner == null) {
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Owner o = owner;
        owner = null;
        if (o != null) {
            o.onAppClosed();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
