package dev.weft.examples;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

/**
 * One call from the consumer to the provider: the data to send and where the answer goes.
 *
 * <p>Thread: created, sent and completed on one event loop (the inbound connection's, which is also its pool's).
 * Buffers: the exchange owns {@code body} until {@link #toRequest} hands it to the outgoing request (the encoder
 * releases it) or {@link #fail} releases it; exactly one of the two happens.
 */
final class ProviderExchange {
    /** Where the answer goes; called exactly once, on the exchange's event loop. */
    interface Callback {
        /** Takes ownership of {@code response} and must release it (or write it on). */
        void onResponse(FullHttpResponse response);

        void onFailure(HttpResponseStatus status, String reason);
    }

    private ByteBuf body;
    private final String contentType;
    /** Trace context headers to pass on, as name, value pairs (null-terminated when shorter); null for none. */
    private final String[] trace;
    private final Callback callback;

    ProviderExchange(ByteBuf body, String contentType, String[] trace, Callback callback) {
        this.body = body;
        this.contentType = contentType;
        this.trace = trace;
        this.callback = callback;
    }

    FullHttpRequest toRequest(ProviderTarget target) {
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, target.path(), body);
        body = null;
        request.headers().set(HttpHeaderNames.HOST, target.hostHeader());
        request.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        HttpUtil.setContentLength(request, request.content().readableBytes());
        if (trace != null) {
            for (int i = 0; i < trace.length && trace[i] != null; i += 2) {
                request.headers().set(trace[i], trace[i + 1]);
            }
        }
        return request;
    }

    void succeed(FullHttpResponse response) {
        callback.onResponse(response);
    }

    void fail(HttpResponseStatus status, String reason) {
        if (body != null) {
            body.release();
            body = null;
        }
        callback.onFailure(status, reason);
    }
}
