package dev.weft.protocol;

import io.netty.buffer.ByteBuf;

import java.time.Duration;

/**
 * The fixed numbers of WMP version 1: head layout, flags, method codes and the flow-control and heartbeat
 * constants both peers must agree on. Everything here is specified in docs/protocol.md; changing a value is a
 * protocol change and needs a version bump.
 */
public final class WmpWire {
    /** First byte of every frame, ASCII 'W': lets a peer that speaks HTTP or TLS by mistake fail on byte one. */
    public static final int MAGIC = 0x57;
    public static final int VERSION = 1;
    public static final int HEAD_LENGTH = 16;
    /** Flag bit 0: the sender's half of the stream ends with this frame. Other bits are reserved and must be 0. */
    public static final int FLAG_END_STREAM = 0x01;
    /** The header-block length field is a u16. */
    public static final int MAX_HEADER_BLOCK_LENGTH = 0xFFFF;
    /** A GOAWAY's debug text is for logs, not a channel for data. */
    public static final int MAX_GOAWAY_DEBUG_BYTES = 256;
    public static final int PING_BODY_LENGTH = 8;
    public static final int WINDOW_UPDATE_BODY_LENGTH = 4;
    /** Body bytes a sender may have outstanding on one stream, per direction, before it gets a WINDOW_UPDATE. */
    public static final int INITIAL_STREAM_WINDOW = 256 * 1024;
    /** An idle connection sends a PING this often. */
    public static final Duration PING_INTERVAL = Duration.ofSeconds(10);
    /** A connection is dead after this many PING intervals without any frame from the peer. */
    public static final int MISSED_PINGS_BEFORE_DEAD = 3;

    // Offsets inside the 16-byte head.
    static final int OFFSET_VERSION = 1;
    static final int OFFSET_TYPE = 2;
    static final int OFFSET_FLAGS = 3;
    static final int OFFSET_STREAM_ID = 4;
    static final int OFFSET_CODE = 8;
    static final int OFFSET_HEADER_BLOCK_LENGTH = 10;
    static final int OFFSET_BODY_LENGTH = 12;

    /** Method code 0: the method is a literal string, first item of the header block. */
    static final int METHOD_LITERAL = 0;
    // Index = method code. Never renumber: codes are on the wire.
    private static final String[] METHODS =
            {null, "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT"};
    static final int MAX_METHOD_CODE = METHODS.length - 1;

    static final int MIN_STATUS = 100;
    static final int MAX_STATUS = 999;

    private WmpWire() {}

    /** Wire code of a method, or {@link #METHOD_LITERAL} if it has none and travels as a string. */
    static int methodCode(String method) {
        return switch (method) {
            case "GET" -> 1;
            case "POST" -> 2;
            case "PUT" -> 3;
            case "DELETE" -> 4;
            case "HEAD" -> 5;
            case "OPTIONS" -> 6;
            case "PATCH" -> 7;
            case "TRACE" -> 8;
            case "CONNECT" -> 9;
            default -> METHOD_LITERAL;
        };
    }

    /** The method for a code in 1..{@link #MAX_METHOD_CODE}; the same String instance every time. */
    static String methodName(int code) {
        return METHODS[code];
    }

    static int varintSize(int value) {
        int size = 1;
        while ((value & ~0x7F) != 0) {
            value >>>= 7;
            size++;
        }
        return size;
    }

    /** Unsigned LEB128: seven bits per byte, least significant group first, high bit set on all but the last. */
    static void writeVarint(ByteBuf out, int value) {
        while ((value & ~0x7F) != 0) {
            out.writeByte((value & 0x7F) | 0x80);
            value >>>= 7;
        }
        out.writeByte(value);
    }
}
