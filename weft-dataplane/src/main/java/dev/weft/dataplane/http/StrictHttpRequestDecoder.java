package dev.weft.dataplane.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpDecoderConfig;

/**
 * Netty's request decoder, made strict where a proxy must be: a message carrying both Transfer-Encoding and
 * Content-Length is rejected instead of silently dropping Content-Length (RFC 9112 §6.3 allows either, but a proxy
 * that forwards such a message is the classic request-smuggling vector, so Weft refuses it with 400).
 *
 * <p>Runs on the connection's Worker event loop, like every decoder.
 */
public final class StrictHttpRequestDecoder extends HttpRequestDecoder {
    public static final String CONFLICTING_FRAMING = "conflicting Content-Length and Transfer-Encoding";

    public StrictHttpRequestDecoder(HttpDecoderConfig config) {
        super(config);
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
        // Marks the message invalid; the handler answers 400 and closes, so no byte of it is forwarded.
        throw new IllegalArgumentException(CONFLICTING_FRAMING);
    }

    static boolean hasConflictingFraming(HttpMessage m) {
        return m.headers().contains(HttpHeaderNames.TRANSFER_ENCODING) && m.headers().contains(HttpHeaderNames.CONTENT_LENGTH);
    }
}
