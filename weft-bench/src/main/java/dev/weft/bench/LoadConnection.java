package dev.weft.bench;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One closed-loop connection of the load generator: it sends a request, verifies the answer, and sends the next
 * one the moment the answer arrives, like a wrk connection. Each outcome is counted once, by kind.
 *
 * <p>Thread: runs on the connection's event loop; the timeout timer fires there too, so the fields need no locks.
 * Buffers: each request's body is allocated here and released by the encoder once written; each answer is released
 * by {@link SimpleChannelInboundHandler} after {@link #channelRead0} has checked it.
 */
final class LoadConnection extends SimpleChannelInboundHandler<FullHttpResponse> {
    private static final char[] ALPHANUMERIC =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
    static final int MIN_DATA = 16;
    static final int MAX_DATA = 64;

    private final LoadGenerator.Run run;
    private boolean outstanding;
    private boolean timedOut;
    private String expected;
    private long sentAt;
    private ScheduledFuture<?> timer;

    LoadConnection(LoadGenerator.Run run) {
        this.run = run;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        super.channelActive(ctx);
        sendNext(ctx);
    }

    private void sendNext(ChannelHandlerContext ctx) {
        if (!run.running()) {
            return;
        }
        String data = randomData();
        expected = String.valueOf(data.hashCode());
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, run.path(),
                ByteBufUtil.writeAscii(ctx.alloc(), data));
        request.headers()
                .set(HttpHeaderNames.HOST, run.hostHeader())
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_X_WWW_FORM_URLENCODED);
        HttpUtil.setContentLength(request, data.length());
        outstanding = true;
        timer = ctx.executor().schedule(() -> {
            // Counted here, so the close that follows is not counted again as a connection error.
            outstanding = false;
            timedOut = true;
            run.stats().timeout();
            ctx.close();
        }, run.timeout().toNanos(), TimeUnit.NANOSECONDS);
        sentAt = System.nanoTime();
        ctx.writeAndFlush(request).addListener(f -> {
            if (!f.isSuccess()) {
                ctx.close();
            }
        });
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
        long micros = (System.nanoTime() - sentAt) / 1_000;
        if (!outstanding) {
            // An answer after its timeout (or one never asked for): the connection is out of step, start afresh.
            ctx.close();
            return;
        }
        outstanding = false;
        timer.cancel(false);
        int status = response.status().code();
        if (status != 200) {
            run.stats().badStatus(status, originOf(response));
        } else if (!response.content().toString(StandardCharsets.UTF_8).equals(expected)) {
            run.stats().wrongBody();
        } else {
            run.stats().success(micros);
        }
        if (!response.decoderResult().isSuccess() || !HttpUtil.isKeepAlive(response)) {
            ctx.close();
        } else {
            sendNext(ctx);
        }
    }

    /**
     * Who produced a non-200 answer: a sidecar names its error kind in {@code x-weft-error}, the example provider
     * names itself in {@code x-provider}, and anything else came from the process the generator talks to.
     */
    static String originOf(FullHttpResponse response) {
        String mesh = response.headers().get("x-weft-error");
        if (mesh != null) {
            return "mesh " + mesh;
        }
        String provider = response.headers().get("x-provider");
        return provider != null ? "provider " + provider : "front";
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (timer != null) {
            timer.cancel(false);
        }
        boolean failed = outstanding || timedOut;
        if (outstanding) {
            outstanding = false;
            run.stats().connectionError();
        }
        // Back off after a failure so a dead target is probed, not hammered in a tight loop.
        run.reconnect(failed);
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private static String randomData() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        char[] data = new char[random.nextInt(MIN_DATA, MAX_DATA + 1)];
        for (int i = 0; i < data.length; i++) {
            data[i] = ALPHANUMERIC[random.nextInt(ALPHANUMERIC.length)];
        }
        return new String(data);
    }
}
