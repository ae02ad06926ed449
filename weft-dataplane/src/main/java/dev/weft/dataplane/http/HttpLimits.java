package dev.weft.dataplane.http;

import dev.weft.protocol.WmpLimits;

/**
 * Limits on what an HTTP/1.1 head may be, shared by every listener that decodes requests and by the answer decoder.
 * Past them a request is answered 414 (request line) or 431 (headers) and the connection closed (an answer is a 502);
 * bodies are not limited here (they stream in pieces of at most {@link #MAX_CHUNK_BYTES}).
 */
public final class HttpLimits {
    public static final int MAX_INITIAL_LINE = 8192;
    public static final int MAX_HEADER_BYTES = 16384;
    public static final int MAX_CHUNK_BYTES = 64 * 1024;
    /**
     * Header field lines in one head (Host included) or trailer section: what a WMP hop accepts
     * ({@link WmpLimits#DEFAULT_MAX_HEADER_FIELDS}). Host leaves the list (it becomes the authority), but the
     * forwarding rules add x-forwarded-for and via when absent, so a request right at this limit can be one field
     * over it at the WMP hop: the WMP upstream refuses such a request alone (431) rather than send it.
     */
    public static final int MAX_HEADER_FIELDS = WmpLimits.DEFAULT_MAX_HEADER_FIELDS;
    /** A chunk-size line with its extensions, CRLF excluded: the size itself is at most 15 hex digits. */
    public static final int MAX_CHUNK_LINE = 1024;
    /** Hex digits of a chunk size: 15 keep it below 2^60, far from overflow, and allow any real chunk. */
    public static final int MAX_CHUNK_SIZE_DIGITS = 15;

    private HttpLimits() {}
}
