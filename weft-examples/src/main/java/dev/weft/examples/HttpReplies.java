package dev.weft.examples;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

/**
 * Small HTTP/1.1 answers shared by the example apps. The returned response owns a fresh buffer; whoever writes it
 * hands that ownership to the channel, whose encoder releases it.
 */
final class HttpReplies {
    static final String TEXT = "text/plain; charset=utf-8";
    static final String JSON = "application/json";

    private HttpReplies() {}

    static FullHttpResponse text(ByteBufAllocator alloc, HttpResponseStatus status, String body, boolean keepAlive) {
        return of(alloc, status, TEXT, body, keepAlive);
    }

    static FullHttpResponse of(ByteBufAllocator alloc, HttpResponseStatus status, String contentType, String body,
                               boolean keepAlive) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                ByteBufUtil.writeUtf8(alloc, body));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return response;
    }
}
