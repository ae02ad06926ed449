package dev.weft.dataplane.http;

import io.netty.handler.codec.http.HttpDecoderConfig;

/**
 * Limits on what an HTTP/1.1 request head may be, shared by every listener that decodes requests. Past them the
 * request is answered 414 (request line) or 431 (headers) and the connection closed; bodies are not limited here
 * (they stream in chunks of at most {@link #MAX_CHUNK_BYTES}).
 */
public final class HttpLimits {
    public static final int MAX_INITIAL_LINE = 8192;
    public static final int MAX_HEADER_BYTES = 16384;
    public static final int MAX_CHUNK_BYTES = 64 * 1024;

    private HttpLimits() {}

    public static HttpDecoderConfig decoderConfig() {
        return new HttpDecoderConfig()
                .setMaxInitialLineLength(MAX_INITIAL_LINE)
                .setMaxHeaderSize(MAX_HEADER_BYTES)
                .setMaxChunkSize(MAX_CHUNK_BYTES);
    }
}
