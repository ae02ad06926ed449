package dev.weft.control;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

/**
 * Writes a JSON answer for the handlers that take one request at a time with auto-read off (the policy and diagnose
 * APIs): the connection reads again once the answer is queued, or closes after it when the client asked so.
 *
 * <p>Thread: the connection's event loop. Buffers: the answer's buffer is allocated here and owned by the write
 * (the encoder releases it).
 */
public final class JsonAnswers {
    private JsonAnswers() {}

    public static void write(ChannelHandlerContext ctx, boolean keepAlive, int status, byte[] json) {
        ByteBuf buf = ctx.alloc().buffer(json.length);
        buf.writeBytes(json);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status), buf);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json").set(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        HttpUtil.setKeepAlive(r, keepAlive);
        var f = ctx.writeAndFlush(r);
        if (!keepAlive) {
            f.addListener(ChannelFutureListener.CLOSE);
        } else {
            f.addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            ctx.channel().config().setAutoRead(true);
        }
    }
}
