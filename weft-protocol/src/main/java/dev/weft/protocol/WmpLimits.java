package dev.weft.protocol;

/**
 * What a decoder accepts from a peer. Every length in a frame head is checked against these before the decoder waits
 * for, or keeps, the bytes it announces, so a peer cannot make a sidecar buffer more than one frame of this size.
 *
 * <p>Version 1 of the protocol has no settings exchange: both sides of a mesh connection run with the same values
 * (the defaults unless configured), and a sender must not exceed them. See docs/protocol.md, "Limits".
 *
 * @param maxHeaderBlockBytes largest header block accepted, in bytes (at most 65535, the width of its length field)
 * @param maxFrameBodyBytes largest body accepted in one REQUEST, RESPONSE or DATA frame, in bytes
 * @param maxHeaderFields largest number of header fields accepted in one REQUEST or RESPONSE frame
 */
public record WmpLimits(int maxHeaderBlockBytes, int maxFrameBodyBytes, int maxHeaderFields) {
    public static final int DEFAULT_MAX_HEADER_BLOCK_BYTES = 16 * 1024;
    public static final int DEFAULT_MAX_FRAME_BODY_BYTES = 1024 * 1024;
    public static final int DEFAULT_MAX_HEADER_FIELDS = 128;
    /** A whole frame must fit in one ByteBuf (int-indexed) for the decoder to slice its body out. */
    public static final int MAX_FRAME_BODY_BYTES =
            Integer.MAX_VALUE - WmpWire.HEAD_LENGTH - WmpWire.MAX_HEADER_BLOCK_LENGTH;

    private static final WmpLimits DEFAULTS =
            new WmpLimits(DEFAULT_MAX_HEADER_BLOCK_BYTES, DEFAULT_MAX_FRAME_BODY_BYTES, DEFAULT_MAX_HEADER_FIELDS);

    public WmpLimits {
        if (maxHeaderBlockBytes < 0 || maxHeaderBlockBytes > WmpWire.MAX_HEADER_BLOCK_LENGTH) {
            throw new IllegalArgumentException("maxHeaderBlockBytes: " + maxHeaderBlockBytes
                    + " (expected 0.." + WmpWire.MAX_HEADER_BLOCK_LENGTH + ")");
        }
        if (maxFrameBodyBytes < 0 || maxFrameBodyBytes > MAX_FRAME_BODY_BYTES) {
            throw new IllegalArgumentException("maxFrameBodyBytes: " + maxFrameBodyBytes
                    + " (expected 0.." + MAX_FRAME_BODY_BYTES + ")");
        }
        if (maxHeaderFields < 0) {
            throw new IllegalArgumentException("maxHeaderFields: " + maxHeaderFields + " (expected >= 0)");
        }
    }

    /** 16 KiB of header block, 1 MiB of body per frame, 128 header fields. */
    public static WmpLimits defaults() {
        return DEFAULTS;
    }
}
