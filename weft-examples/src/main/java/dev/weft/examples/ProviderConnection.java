package dev.weft.examples;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One keep-alive connection from the consumer to the provider, carrying one call at a time.
 *
 * <p>Thread: runs on its pool's event loop. Buffers: a response read here is handed, unreleased, to the exchange's
 * callback, which owns it from then on ({@code autoRelease} is off); a response nobody asked for is released here.
 */
final class ProviderConnection extends SimpleChannelInboundHandler<FullHttpResponse> {
    private final ProviderPool pool;
    private Channel channel;
    private ProviderExchange current;
    private ScheduledFuture<?> timer;
    private boolean timedOut;
    private Throwable failure;

    ProviderConnection(ProviderPool pool) {
        super(false);
        this.pool = pool;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    boolean isActive() {
        return channel.isActive();
    }

    void send(ProviderExchange exchange) {
        current = exchange;
        // Armed before writing: a failed write closes the channel, and channelInactive must find the timer to cancel.
        timer = channel.eventLoop().schedule(() -> {
            timedOut = true;
            channel.close();
        }, pool.timeout().toNanos(), TimeUnit.NANOSECONDS);
        channel.writeAndFlush(exchange.toRequest(pool.target())).addListener(f -> {
            if (!f.isSuccess()) {
                failure = f.cause();
                channel.close();
            }
        });
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
        ProviderExchange exchange = current;
        current = null;
        cancelTimer();
        if (exchange == null || !response.decoderResult().isSuccess()) {
            response.release();
            if (exchange != null) {
                exchange.fail(HttpResponseStatus.BAD_GATEWAY, "provider " + pool.target().url()
                        + " sent a malformed response: " + ProviderPool.describe(response.decoderResult().cause()));
            }
            ctx.close();
            return;
        }
        // Back to the pool before the answer goes on, so the next call from this loop can reuse this connection.
        if (HttpUtil.isKeepAlive(response)) {
            pool.release(this);
        } else {
            ctx.close();
        }
        exchange.succeed(response);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelTimer();
        pool.closed(this);
        ProviderExchange exchange = current;
        current = null;
        if (exchange != null) {
            if (timedOut) {
                exchange.fail(HttpResponseStatus.GATEWAY_TIMEOUT, "provider " + pool.target().url()
                        + " did not answer within " + pool.timeout().toMillis() + " ms");
            } else {
                exchange.fail(HttpResponseStatus.BAD_GATEWAY, "provider " + pool.target().url()
                        + " closed the connection before answering"
                        + (failure == null ? "" : ": " + ProviderPool.describe(failure)));
            }
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failure = cause;
        ctx.close();
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
