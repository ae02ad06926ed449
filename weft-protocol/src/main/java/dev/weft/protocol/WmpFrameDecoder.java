package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * Turns WMP bytes from a peer into {@link WmpFrame}s (layout in docs/protocol.md), one frame per complete frame on
 * the wire, however the bytes were split across reads.
 *
 * <p>Untrusted input: every length in a head is checked against {@link WmpLimits} (and the frame type's fixed
 * sizes) as soon as the 16 head bytes are in, before waiting for the rest; nothing is allocated from a declared
 * length. The first malformed frame ends the connection: the error is counted in {@link WmpCodecMetrics}, a GOAWAY
 * naming the problem is written and flushed, the channel is closed and all further input is dropped. Nothing is
 * thrown and {@code exceptionCaught} is never fired for bad input, so a peer cannot fill logs with stack traces.
 *
 * <p>Header strings (method, authority, path, names and values that are not in the static table) are Strings of
 * their own, owned by the frame: none refers to the buffer. One the peer sent recently on this connection is handed
 * out again from a small bounded {@link StringCache} instead of being made anew.
 *
 * <p>Threading: one instance per channel (it holds the partial frame), used only on that channel's event loop.
 *
 * <p>Ownership: bytes accumulate in a composite buffer so a large body is never copied while it arrives. A decoded
 * REQUEST, RESPONSE or DATA frame's body is a retained slice of that buffer (zero copy): the handler that receives
 * the frame owns that reference and must release it, by writing the frame on or by calling
 * {@link WmpFrame#release()}. While it is held it keeps the underlying read buffers alive, so handlers should not
 * park bodies for long. An empty body is {@link Unpooled#EMPTY_BUFFER}. The decoder releases everything else it
 * holds when it is removed or the channel closes; the GOAWAY it writes belongs to the outbound pipeline.
 */
public final class WmpFrameDecoder extends ByteToMessageDecoder {
    private final WmpLimits limits;
    private final WmpCodecMetrics metrics;

    /** Set by the first rejected frame; from then on input is discarded until the channel is gone. */
    private boolean failed;
    /** Highest stream the peer opened, reported as last-stream-id in the GOAWAY if its input is rejected. */
    private int lastPeerStreamId;

    // Read position inside the header block being parsed; fields rather than locals so readVarint and readString
    // can advance it without allocating a cursor object per frame.
    private int cursor;
    /** Where header strings are copied to be decoded; grows to the longest string seen (under 64 KiB). */
    private byte[] scratch = new byte[256];
    /** The peer sends the same authority, path and values on every request: those cost no new String. */
    private final StringCache strings = new StringCache(StandardCharsets.UTF_8);
    /**
     * Header lists whose exchange is over come back here ({@link WmpHeaders#recycle}): one per stream open at once,
     * up to 8, and no list per frame.
     */
    private final WmpHeaders.Spares spares = new WmpHeaders.Spares(8);
    private int blockEnd;
    /** The REQUEST being read's trace context, when its traceparent field was taken as numbers; else null. */
    private Traceparent traceparent;

    public WmpFrameDecoder(WmpLimits limits, WmpCodecMetrics metrics) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        // Appends each read as a component instead of copying it into one growing buffer.
        setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            WmpFrame frame = decodeFrame(in);
            if (frame != null) {
                out.add(frame);
            }
        } catch (Rejected r) {
            reject(ctx, in, r.kind, r.getMessage());
        }
    }

    /** Returns the next frame, or null if it is not all here yet; consumes bytes only when it returns a frame. */
    private WmpFrame decodeFrame(ByteBuf in) {
        int start = in.readerIndex();
        int readable = in.readableBytes();
        // The first four bytes are checked as soon as each arrives: a peer speaking HTTP or TLS to this port is
        // turned away on its first byte instead of after sixteen.
        if (readable < 1) {
            return null;
        }
        int magic = in.getUnsignedByte(start);
        if (magic != WmpWire.MAGIC) {
            throw new Rejected(WmpDecodeError.BAD_MAGIC, String.format("bad magic 0x%02x (expected 0x%02x)",
                    magic, WmpWire.MAGIC));
        }
        if (readable < 2) {
            return null;
        }
        int version = in.getUnsignedByte(start + WmpWire.OFFSET_VERSION);
        if (version != WmpWire.VERSION) {
            throw new Rejected(WmpDecodeError.UNSUPPORTED_VERSION,
                    "unsupported version " + version + " (expected " + WmpWire.VERSION + ")");
        }
        if (readable < 3) {
            return null;
        }
        int typeCode = in.getUnsignedByte(start + WmpWire.OFFSET_TYPE);
        WmpFrameType type = WmpFrameType.fromCode(typeCode);
        if (type == null) {
            throw new Rejected(WmpDecodeError.UNKNOWN_TYPE, "unknown frame type " + typeCode + " (expected 1.."
                    + WmpFrameType.values().length + ")");
        }
        if (readable < 4) {
            return null;
        }
        int flags = in.getUnsignedByte(start + WmpWire.OFFSET_FLAGS);
        checkFlags(type, flags);
        if (readable < WmpWire.HEAD_LENGTH) {
            return null;
        }
        int streamId = in.getInt(start + WmpWire.OFFSET_STREAM_ID);
        int code = in.getUnsignedShort(start + WmpWire.OFFSET_CODE);
        int headerBlockLength = in.getUnsignedShort(start + WmpWire.OFFSET_HEADER_BLOCK_LENGTH);
        long bodyLength = in.getUnsignedInt(start + WmpWire.OFFSET_BODY_LENGTH);
        checkHead(type, streamId, code, headerBlockLength, bodyLength);

        // checkHead bounds both lengths, so the sum fits an int.
        int frameLength = WmpWire.HEAD_LENGTH + headerBlockLength + (int) bodyLength;
        if (readable < frameLength) {
            return null;
        }
        WmpFrame frame = readFrame(in, type, flags, streamId, code, headerBlockLength, (int) bodyLength);
        metrics.frameIn(frameLength);
        return frame;
    }

    private static void checkFlags(WmpFrameType type, int flags) {
        if ((flags & ~WmpWire.FLAG_END_STREAM) != 0) {
            throw new Rejected(WmpDecodeError.BAD_FLAGS, String.format(
                    "reserved flags 0x%02x set on %s (expected only END_STREAM 0x01)", flags, type));
        }
        if (flags != 0 && !carriesBody(type)) {
            throw new Rejected(WmpDecodeError.BAD_FLAGS,
                    "END_STREAM on " + type + " (expected only on REQUEST, RESPONSE, DATA)");
        }
    }

    /** Everything that can be known from the head alone, so bad lengths are refused before any waiting. */
    private void checkHead(WmpFrameType type, int streamId, int code, int headerBlockLength, long bodyLength) {
        if (streamId < 0) {
            throw new Rejected(WmpDecodeError.BAD_STREAM_ID, String.format(
                    "stream id 0x%08x has the reserved top bit set on %s", streamId, type));
        }
        switch (type) {
            case REQUEST -> {
                requireStream(type, streamId);
                if (code > WmpWire.MAX_METHOD_CODE) {
                    throw new Rejected(WmpDecodeError.BAD_PAYLOAD, "unknown method code " + code
                            + " on stream " + streamId + " (expected 0.." + WmpWire.MAX_METHOD_CODE + ")");
                }
                checkHeaderBlockLength(type, headerBlockLength);
                checkBodyLength(type, bodyLength);
            }
            case RESPONSE -> {
                requireStream(type, streamId);
                if (code < WmpWire.MIN_STATUS || code > WmpWire.MAX_STATUS) {
                    throw new Rejected(WmpDecodeError.BAD_PAYLOAD, "status " + code + " on stream " + streamId
                            + " (expected " + WmpWire.MIN_STATUS + ".." + WmpWire.MAX_STATUS + ")");
                }
                checkHeaderBlockLength(type, headerBlockLength);
                checkBodyLength(type, bodyLength);
            }
            case DATA -> {
                requireStream(type, streamId);
                requireNoCode(type, code);
                requireNoHeaderBlock(type, headerBlockLength);
                checkBodyLength(type, bodyLength);
            }
            case PING, PONG -> {
                if (streamId != 0) {
                    throw new Rejected(WmpDecodeError.BAD_STREAM_ID,
                            type + " on stream " + streamId + " (expected stream 0)");
                }
                requireNoCode(type, code);
                requireNoHeaderBlock(type, headerBlockLength);
                requireBodyLength(type, bodyLength, WmpWire.PING_BODY_LENGTH);
            }
            case CANCEL -> {
                requireStream(type, streamId);
                requireNoHeaderBlock(type, headerBlockLength);
                requireBodyLength(type, bodyLength, 0);
            }
            case GOAWAY -> {
                requireNoHeaderBlock(type, headerBlockLength);
                if (bodyLength > WmpWire.MAX_GOAWAY_DEBUG_BYTES) {
                    throw new Rejected(WmpDecodeError.FRAME_TOO_LARGE, "GOAWAY debug text of " + bodyLength
                            + " bytes (expected at most " + WmpWire.MAX_GOAWAY_DEBUG_BYTES + ")");
                }
            }
            case WINDOW_UPDATE -> {
                requireNoCode(type, code);
                requireNoHeaderBlock(type, headerBlockLength);
                requireBodyLength(type, bodyLength, WmpWire.WINDOW_UPDATE_BODY_LENGTH);
            }
        }
    }

    private WmpFrame readFrame(ByteBuf in, WmpFrameType type, int flags, int streamId, int code,
                               int headerBlockLength, int bodyLength) {
        int blockStart = in.readerIndex() + WmpWire.HEAD_LENGTH;
        boolean endStream = (flags & WmpWire.FLAG_END_STREAM) != 0;
        cursor = blockStart;
        blockEnd = blockStart + headerBlockLength;
        return switch (type) {
            case REQUEST -> {
                String method = code == WmpWire.METHOD_LITERAL ? readMethod(in, streamId) : WmpWire.methodName(code);
                String authority = readString(in, "authority");
                String path = readString(in, "path");
                traceparent = null;
                WmpHeaders headers = readHeaders(in, streamId, true);
                in.readerIndex(blockEnd);
                lastPeerStreamId = Math.max(lastPeerStreamId, streamId);
                yield new WmpRequest(streamId, endStream, method, authority, path, headers, readBody(in, bodyLength),
                        traceparent);
            }
            case RESPONSE -> {
                WmpHeaders headers = readHeaders(in, streamId, false);
                in.readerIndex(blockEnd);
                yield new WmpResponse(streamId, endStream, code, headers, readBody(in, bodyLength));
            }
            case DATA -> {
                in.skipBytes(WmpWire.HEAD_LENGTH);
                yield new WmpData(streamId, endStream, readBody(in, bodyLength));
            }
            case PING, PONG -> {
                in.skipBytes(WmpWire.HEAD_LENGTH);
                yield new WmpPing(in.readLong(), type == WmpFrameType.PONG);
            }
            case CANCEL -> {
                in.skipBytes(WmpWire.HEAD_LENGTH);
                yield new WmpCancel(streamId, WmpError.fromCode(code));
            }
            case GOAWAY -> {
                in.skipBytes(WmpWire.HEAD_LENGTH);
                String debug = bodyLength == 0 ? "" : in.toString(in.readerIndex(), bodyLength, StandardCharsets.UTF_8);
                in.skipBytes(bodyLength);
                yield new WmpGoAway(streamId, WmpError.fromCode(code), debug);
            }
            case WINDOW_UPDATE -> {
                int increment = in.getInt(blockStart);
                if (increment <= 0) {
                    throw new Rejected(WmpDecodeError.BAD_PAYLOAD, "window increment " + Integer.toUnsignedString(
                            increment) + " on stream " + streamId + " (expected 1..2^31-1)");
                }
                in.skipBytes(WmpWire.HEAD_LENGTH + WmpWire.WINDOW_UPDATE_BODY_LENGTH);
                yield new WmpWindowUpdate(streamId, increment);
            }
        };
    }

    private static ByteBuf readBody(ByteBuf in, int bodyLength) {
        // A zero-length slice would still pin the read buffer; the shared empty buffer pins nothing.
        return bodyLength == 0 ? Unpooled.EMPTY_BUFFER : in.readRetainedSlice(bodyLength);
    }

    private String readMethod(ByteBuf in, int streamId) {
        String method = readString(in, "method");
        if (method.isEmpty()) {
            throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, "empty literal method on stream " + streamId);
        }
        return method;
    }

    /**
     * @param request whether a {@code traceparent} may be taken as numbers ({@link #traceparent}): the first one, in
     *                exactly {@link Traceparent}'s form, when no other came before it. A second one after it puts
     *                the first back among the fields as text, where it stood, so that the list is as sent.
     */
    private WmpHeaders readHeaders(ByteBuf in, int streamId, boolean request) {
        // Room for a usual head at once: growing from empty copied the list twice per frame (JFR).
        WmpHeaders headers = spares.take(Math.min(8, limits.maxHeaderFields()));
        int traceAt = -1; // where the numbers' field stood; -2 once a traceparent stays text
        while (cursor < blockEnd) {
            if (headers.size() + (traceparent == null ? 0 : 1) == limits.maxHeaderFields()) {
                throw new Rejected(WmpDecodeError.TOO_MANY_HEADERS, "more than " + limits.maxHeaderFields()
                        + " header fields on stream " + streamId);
            }
            int b = in.getUnsignedByte(cursor++);
            int index = b & 0x7F;
            if (b != 0 && !WmpStaticTable.contains(index)) {
                throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, "unknown static table index " + index
                        + " on stream " + streamId + " (expected 1.." + WmpStaticTable.size() + ")");
            }
            if ((b & 0x80) != 0) {
                // Table strings are shared: a fully indexed field allocates nothing.
                headers.add(WmpStaticTable.name(index), WmpStaticTable.value(index));
            } else if (b != 0) {
                if (index == WmpStaticTable.TRACEPARENT && request) {
                    if (traceAt == -1 && takeTraceparent(in)) {
                        traceAt = headers.size();
                        continue;
                    }
                    traceAt = textTraceparent(headers, traceAt);
                }
                headers.add(WmpStaticTable.name(index), readString(in, "header value",
                        !WmpStaticTable.perRequestValue(index)));
            } else {
                String name = readString(in, "header name");
                if (name.isEmpty()) {
                    throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, "empty header name on stream "
                            + streamId);
                }
                // Checked here once, so that no receiver has to lower-case names again (as HTTP/2 requires too).
                for (int i = 0; i < name.length(); i++) {
                    char c = name.charAt(i);
                    if (c >= 'A' && c <= 'Z') {
                        throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, "header name '" + name
                                + "' on stream " + streamId + " is not lower case");
                    }
                }
                if (request && name.equals(Traceparent.NAME)) {
                    traceAt = textTraceparent(headers, traceAt);
                }
                headers.add(name, readString(in, "header value"));
            }
        }
        return headers;
    }

    /** Takes the value at the cursor as {@link #traceparent} if it is exactly {@link Traceparent}'s form. */
    private boolean takeTraceparent(ByteBuf in) {
        int at = cursor + 1; // a length of 55 is one varint byte
        if (at + Traceparent.LENGTH > blockEnd || in.getUnsignedByte(cursor) != Traceparent.LENGTH) {
            return false;
        }
        Traceparent t = Traceparent.read(in, at);
        if (t == null) {
            return false;
        }
        traceparent = t;
        cursor = at + Traceparent.LENGTH;
        return true;
    }

    /** A traceparent that stays text: one taken as numbers before it goes back among the fields, where it stood. */
    private int textTraceparent(WmpHeaders headers, int traceAt) {
        if (traceAt >= 0) {
            headers.insert(traceAt, Traceparent.NAME, traceparent.toString());
            traceparent = null;
        }
        return -2;
    }

    private String readString(ByteBuf in, String what) {
        return readString(in, what, true);
    }

    /** @param recent whether to look among (and keep it with) the strings this peer sent recently */
    private String readString(ByteBuf in, String what, boolean recent) {
        int length = readVarint(in, what);
        int left = blockEnd - cursor;
        if (length > left) {
            throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, what + " of " + length
                    + " bytes overruns the header block (" + left + " bytes left)");
        }
        if (length == 0) {
            return "";
        }
        // Through a scratch array: ByteBuf.toString on a direct buffer makes a ByteBuffer view and a copy per
        // string, and a request carries a dozen of them.
        if (scratch.length < length) {
            scratch = new byte[Math.max(length, scratch.length * 2)];
        }
        in.getBytes(cursor, scratch, 0, length);
        cursor += length;
        return recent ? strings.get(scratch, 0, length) : new String(scratch, 0, length, StandardCharsets.UTF_8);
    }

    /** Unsigned LEB128 of at most 3 bytes: no string can be longer than a header block, which is under 64 KiB. */
    private int readVarint(ByteBuf in, String what) {
        int value = 0;
        for (int shift = 0; shift < 21; shift += 7) {
            if (cursor >= blockEnd) {
                throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK,
                        "truncated length of " + what + " at the end of the header block");
            }
            int b = in.getUnsignedByte(cursor++);
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, "length of " + what + " longer than 3 bytes");
    }

    private void reject(ChannelHandlerContext ctx, ByteBuf in, WmpDecodeError kind, String message) {
        failed = true;
        metrics.error(kind);
        in.skipBytes(in.readableBytes());
        // Written as bytes from this context, so it reaches the peer whether or not an encoder sits above us.
        ByteBuf goAway = WmpFrameEncoder.encodeHead(ctx.alloc(),
                new WmpGoAway(lastPeerStreamId, kind.goAwayError(), message));
        metrics.frameOut(goAway.readableBytes());
        ctx.writeAndFlush(goAway).addListener(ChannelFutureListener.CLOSE);
    }

    private void checkHeaderBlockLength(WmpFrameType type, int headerBlockLength) {
        if (headerBlockLength > limits.maxHeaderBlockBytes()) {
            throw new Rejected(WmpDecodeError.FRAME_TOO_LARGE, type + " header block of " + headerBlockLength
                    + " bytes (expected at most " + limits.maxHeaderBlockBytes() + ")");
        }
    }

    private void checkBodyLength(WmpFrameType type, long bodyLength) {
        if (bodyLength > limits.maxFrameBodyBytes()) {
            throw new Rejected(WmpDecodeError.FRAME_TOO_LARGE, type + " body of " + bodyLength
                    + " bytes (expected at most " + limits.maxFrameBodyBytes() + ")");
        }
    }

    private static void requireStream(WmpFrameType type, int streamId) {
        if (streamId == 0) {
            throw new Rejected(WmpDecodeError.BAD_STREAM_ID, type + " on stream 0 (expected a stream id >= 1)");
        }
    }

    private static void requireNoCode(WmpFrameType type, int code) {
        if (code != 0) {
            throw new Rejected(WmpDecodeError.BAD_PAYLOAD, type + " with code " + code + " (expected 0)");
        }
    }

    private static void requireNoHeaderBlock(WmpFrameType type, int headerBlockLength) {
        if (headerBlockLength != 0) {
            throw new Rejected(WmpDecodeError.MALFORMED_HEADER_BLOCK, type + " with a header block of "
                    + headerBlockLength + " bytes (expected none)");
        }
    }

    private static void requireBodyLength(WmpFrameType type, long bodyLength, int expected) {
        if (bodyLength != expected) {
            throw new Rejected(WmpDecodeError.BAD_PAYLOAD, type + " body of " + bodyLength + " bytes (expected "
                    + expected + ")");
        }
    }

    private static boolean carriesBody(WmpFrameType type) {
        return type == WmpFrameType.REQUEST || type == WmpFrameType.RESPONSE || type == WmpFrameType.DATA;
    }

    /**
     * Control flow from deep inside parsing back to {@link #decode}, where it becomes a GOAWAY. Never escapes this
     * class; carries no stack trace because a misbehaving peer must not cost us one per connection.
     */
    private static final class Rejected extends RuntimeException {
        final WmpDecodeError kind;

        Rejected(WmpDecodeError kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }
    }
}
