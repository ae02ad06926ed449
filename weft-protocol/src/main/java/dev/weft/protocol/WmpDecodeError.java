package dev.weft.protocol;

/**
 * Why a decoder rejected a peer's bytes, as counted by {@link WmpCodecMetrics}. Each kind maps to the GOAWAY error
 * the decoder sends before it closes the connection ({@link #goAwayError()}).
 */
public enum WmpDecodeError {
    /** Byte 0 is not 0x57: the peer does not speak WMP (often HTTP or TLS sent to the wrong port). */
    BAD_MAGIC(WmpError.PROTOCOL_ERROR),
    /** Byte 1 is a version this decoder does not implement. */
    UNSUPPORTED_VERSION(WmpError.UNSUPPORTED_VERSION),
    /** Byte 2 is not a known frame type. */
    UNKNOWN_TYPE(WmpError.PROTOCOL_ERROR),
    /** A reserved flag bit is set, or END_STREAM on a frame type that has no stream to end. */
    BAD_FLAGS(WmpError.PROTOCOL_ERROR),
    /** A header block or body is longer than the limits allow. */
    FRAME_TOO_LARGE(WmpError.FRAME_TOO_LARGE),
    /** The header block does not parse (truncated or overlong length, string running past the block, unknown table
     *  index, empty name or literal method), or a header block is present on a frame type that carries none. */
    MALFORMED_HEADER_BLOCK(WmpError.PROTOCOL_ERROR),
    /** More header fields than the limits allow; a size limit like {@link #FRAME_TOO_LARGE}. */
    TOO_MANY_HEADERS(WmpError.FRAME_TOO_LARGE),
    /** Stream id has its top bit set, is 0 on a stream frame, or is not 0 on a connection frame. */
    BAD_STREAM_ID(WmpError.PROTOCOL_ERROR),
    /** The code field or the body does not fit the frame type (unknown method code, status outside 100..999,
     *  wrong PING or WINDOW_UPDATE body length, zero window increment, a body on CANCEL...). */
    BAD_PAYLOAD(WmpError.PROTOCOL_ERROR);

    private final WmpError goAwayError;

    WmpDecodeError(WmpError goAwayError) {
        this.goAwayError = goAwayError;
    }

    /** The error code of the GOAWAY sent to the peer when its input is rejected for this reason. */
    public WmpError goAwayError() {
        return goAwayError;
    }
}
