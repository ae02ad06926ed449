package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.netty.util.ReferenceCountUtil;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Turns {@link WmpFrame}s into WMP bytes (layout in docs/protocol.md).
 *
 * <p>Each frame becomes at most two buffers: a small one from {@code ctx.alloc()} with the 16-byte head and the
 * header block (and, for PING, PONG, WINDOW_UPDATE and GOAWAY, their few body bytes), followed by the frame's body
 * buffer itself, passed on untouched so a proxied body is never copied.
 *
 * <p>Threading and ownership: runs on the event loop of the channel it is written on; stateless apart from the
 * thread-safe metrics, so one instance may serve every channel. A written frame's body reference moves to the
 * outbound pipeline (the transport releases it once written); if the frame cannot be encoded the body is released
 * here and the write fails with an {@link io.netty.handler.codec.EncoderException}. The encoder never keeps a
 * buffer after {@code encode} returns.
 */
@Sharable
public final class WmpFrameEncoder extends MessageToMessageEncoder<WmpFrame> {
    private static final byte[] NO_BYTES = new byte[0];
    /** A request's {@link Traceparent} as a field: index byte, length byte (55 fits in one), value. */
    private static final int TRACEPARENT_FIELD = 2 + Traceparent.LENGTH;
    /** Bodies up to this size are copied into the head's buffer; larger ones are written as they are. */
    static final int COPY_BODY_LIMIT = 512;

    private final WmpCodecMetrics metrics;

    public WmpFrameEncoder(WmpCodecMetrics metrics) {
        super(WmpFrame.class);
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, WmpFrame frame, List<Object> out) {
        ByteBuf body = bodyOf(frame);
        ByteBuf head;
        try {
            head = encodeHead(ctx.alloc(), frame);
        } catch (RuntimeException e) {
            // The frame is not reference counted, so MessageToMessageEncoder cannot release the body for us.
            ReferenceCountUtil.safeRelease(body);
            throw e;
        }
        int bodyLength = body == null ? 0 : body.readableBytes();
        metrics.frameOut((long) head.readableBytes() + bodyLength);
        if (body != null && bodyLength > 0 && bodyLength <= COPY_BODY_LIMIT) {
            // A small body is copied behind its head: one buffer per frame lets the write keep its (void)
            // promise, where two make MessageToMessageEncoder combine promises per frame, and it saves an iovec.
            Bytes.append(head, body, body.readerIndex(), bodyLength);
            body.release();
            body = null;
        }
        out.add(head);
        if (body != null) {
            if (bodyLength > 0) {
                out.add(body); // larger bodies go out as they are: zero copy
            } else {
                body.release();
            }
        }
    }

    /**
     * Encodes everything of {@code frame} except the body of a REQUEST, RESPONSE or DATA frame (whose length the
     * head announces; the caller writes that body right after). For other frame types this is the whole frame.
     * Does not touch the frame's body reference count. The returned buffer belongs to the caller.
     *
     * @throws IllegalArgumentException if the frame cannot be put on the wire (stream id out of range, status
     *     outside 100..999, header block over 65535 bytes, window increment below 1)
     */
    public static ByteBuf encodeHead(ByteBufAllocator alloc, WmpFrame frame) {
        return switch (frame) {
            case WmpRequest r -> encodeRequestHead(alloc, r);
            case WmpResponse r -> encodeResponseHead(alloc, r);
            case WmpData d -> {
                requireStreamId(d.streamId());
                ByteBuf b = alloc.ioBuffer(WmpWire.HEAD_LENGTH);
                writeHead(b, WmpFrameType.DATA, flags(d.endStream()), d.streamId(), 0, 0, bodyLength(d.body()));
                yield b;
            }
            case WmpPing p -> {
                ByteBuf b = alloc.ioBuffer(WmpWire.HEAD_LENGTH + WmpWire.PING_BODY_LENGTH);
                writeHead(b, p.type(), 0, 0, 0, 0, WmpWire.PING_BODY_LENGTH);
                yield b.writeLong(p.payload());
            }
            case WmpCancel c -> {
                requireStreamId(c.streamId());
                ByteBuf b = alloc.ioBuffer(WmpWire.HEAD_LENGTH);
                writeHead(b, WmpFrameType.CANCEL, 0, c.streamId(), c.error().code(), 0, 0);
                yield b;
            }
            case WmpGoAway g -> {
                if (g.lastStreamId() < 0) {
                    throw new IllegalArgumentException("GOAWAY last stream id " + g.lastStreamId()
                            + " (expected 0..2^31-1)");
                }
                byte[] debug = goAwayDebugBytes(g.debug());
                ByteBuf b = alloc.ioBuffer(WmpWire.HEAD_LENGTH + debug.length);
                writeHead(b, WmpFrameType.GOAWAY, 0, g.lastStreamId(), g.error().code(), 0, debug.length);
                yield b.writeBytes(debug);
            }
            case WmpWindowUpdate w -> {
                if (w.streamId() < 0 || w.increment() < 1) {
                    throw new IllegalArgumentException("WINDOW_UPDATE stream " + w.streamId() + " increment "
                            + w.increment() + " (expected stream 0..2^31-1, increment 1..2^31-1)");
                }
                ByteBuf b = alloc.ioBuffer(WmpWire.HEAD_LENGTH + WmpWire.WINDOW_UPDATE_BODY_LENGTH);
                writeHead(b, WmpFrameType.WINDOW_UPDATE, 0, w.streamId(), 0, 0, WmpWire.WINDOW_UPDATE_BODY_LENGTH);
                yield b.writeInt(w.increment());
            }
        };
    }

    /**
     * Bytes {@code frame} takes on the wire: head, header block and body. Walks the header fields once (a table
     * lookup and a UTF-8 length per field), so it costs about as much as encoding without writing.
     */
    public static int encodedSize(WmpFrame frame) {
        return switch (frame) {
            case WmpRequest r -> {
                int method = WmpWire.methodCode(r.method());
                int block = (method == WmpWire.METHOD_LITERAL ? stringSize(r.method()) : 0)
                        + stringSize(r.authority()) + stringSize(r.path()) + headersSize(r.headers())
                        + (r.traceparent() == null ? 0 : TRACEPARENT_FIELD);
                yield WmpWire.HEAD_LENGTH + block + bodyLength(r.body());
            }
            case WmpResponse r -> WmpWire.HEAD_LENGTH + headersSize(r.headers()) + bodyLength(r.body());
            case WmpData d -> WmpWire.HEAD_LENGTH + bodyLength(d.body());
            case WmpPing p -> WmpWire.HEAD_LENGTH + WmpWire.PING_BODY_LENGTH;
            case WmpCancel c -> WmpWire.HEAD_LENGTH;
            case WmpGoAway g -> WmpWire.HEAD_LENGTH + goAwayDebugBytes(g.debug()).length;
            case WmpWindowUpdate w -> WmpWire.HEAD_LENGTH + WmpWire.WINDOW_UPDATE_BODY_LENGTH;
        };
    }

    /**
     * The header block a request would take (method, authority, path and fields): what the receiving decoder holds
     * against {@link WmpLimits#maxHeaderBlockBytes()}. A sender checks it so that no request can make its peer refuse
     * the whole connection.
     */
    public static int headerBlockSize(WmpRequest r) {
        return encodedSize(r) - WmpWire.HEAD_LENGTH - bodyLength(r.body());
    }

    private static ByteBuf encodeRequestHead(ByteBufAllocator alloc, WmpRequest r) {
        requireStreamId(r.streamId());
        String method = Objects.requireNonNull(r.method(), "method");
        String authority = Objects.requireNonNull(r.authority(), "authority");
        String path = Objects.requireNonNull(r.path(), "path");
        if (method.isEmpty()) {
            throw new IllegalArgumentException("empty method on stream " + r.streamId());
        }
        int methodCode = WmpWire.methodCode(method);
        int estimate = WmpWire.HEAD_LENGTH + authority.length() + path.length() + 4 + estimateSize(r.headers())
                + (methodCode == WmpWire.METHOD_LITERAL ? method.length() + 2 : 0)
                + (r.traceparent() == null ? 0 : TRACEPARENT_FIELD);
        ByteBuf b = alloc.ioBuffer(estimate);
        try {
            writeHead(b, WmpFrameType.REQUEST, flags(r.endStream()), r.streamId(), methodCode, 0,
                    bodyLength(r.body()));
            if (methodCode == WmpWire.METHOD_LITERAL) {
                writeString(b, method);
            }
            writeString(b, authority);
            writeString(b, path);
            writeHeaders(b, r.headers());
            Traceparent tp = r.traceparent();
            if (tp != null) {
                // The same bytes as a traceparent field sent as text: the name's table entry, the length, the
                // value, written from the numbers with no String made.
                b.writeByte(WmpStaticTable.TRACEPARENT).writeByte(Traceparent.LENGTH);
                tp.write(b);
            }
            return setHeaderBlockLength(b, r.streamId());
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
    }

    private static ByteBuf encodeResponseHead(ByteBufAllocator alloc, WmpResponse r) {
        requireStreamId(r.streamId());
        if (r.status() < WmpWire.MIN_STATUS || r.status() > WmpWire.MAX_STATUS) {
            throw new IllegalArgumentException("status " + r.status() + " on stream " + r.streamId()
                    + " (expected " + WmpWire.MIN_STATUS + ".." + WmpWire.MAX_STATUS + ")");
        }
        ByteBuf b = alloc.ioBuffer(WmpWire.HEAD_LENGTH + estimateSize(r.headers()));
        try {
            writeHead(b, WmpFrameType.RESPONSE, flags(r.endStream()), r.streamId(), r.status(), 0,
                    bodyLength(r.body()));
            writeHeaders(b, r.headers());
            return setHeaderBlockLength(b, r.streamId());
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
    }

    /** The header-block length is only known once written: patching it avoids a second pass over the fields. */
    private static ByteBuf setHeaderBlockLength(ByteBuf b, int streamId) {
        int length = b.writerIndex() - b.readerIndex() - WmpWire.HEAD_LENGTH;
        if (length > WmpWire.MAX_HEADER_BLOCK_LENGTH) {
            throw new IllegalArgumentException("header block of " + length + " bytes on stream " + streamId
                    + " (expected at most " + WmpWire.MAX_HEADER_BLOCK_LENGTH + ")");
        }
        b.setShort(b.readerIndex() + WmpWire.OFFSET_HEADER_BLOCK_LENGTH, length);
        return b;
    }

    private static void writeHead(ByteBuf b, WmpFrameType type, int flags, int streamId, int code,
                                  int headerBlockLength, int bodyLength) {
        b.writeByte(WmpWire.MAGIC)
                .writeByte(WmpWire.VERSION)
                .writeByte(type.code())
                .writeByte(flags)
                .writeInt(streamId)
                .writeShort(code)
                .writeShort(headerBlockLength)
                .writeInt(bodyLength);
    }

    private static void writeHeaders(ByteBuf b, WmpHeaders headers) {
        if (headers == null) {
            return;
        }
        for (int i = 0, n = headers.size(); i < n; i++) {
            String name = headers.name(i);
            String value = headers.value(i);
            int index = WmpStaticTable.lookup(name, value);
            b.writeByte(index);
            if (index == 0) {
                writeString(b, name);
                writeString(b, value);
            } else if (index < 0x80) {
                writeString(b, value);
            }
        }
    }

    private static int headersSize(WmpHeaders headers) {
        if (headers == null) {
            return 0;
        }
        int size = 0;
        for (int i = 0, n = headers.size(); i < n; i++) {
            String name = headers.name(i);
            String value = headers.value(i);
            int index = WmpStaticTable.lookup(name, value);
            size += 1;
            if (index == 0) {
                size += stringSize(name) + stringSize(value);
            } else if (index < 0x80) {
                size += stringSize(value);
            }
        }
        return size;
    }

    /** Upper bound for ASCII fields (the common case), so the head buffer rarely has to grow. */
    private static int estimateSize(WmpHeaders headers) {
        if (headers == null) {
            return 0;
        }
        int size = 0;
        for (int i = 0, n = headers.size(); i < n; i++) {
            size += 3 + headers.name(i).length() + headers.value(i).length();
        }
        return size;
    }

    private static void writeString(ByteBuf b, String s) {
        int length = ByteBufUtil.utf8Bytes(s);
        WmpWire.writeVarint(b, length);
        ByteBufUtil.reserveAndWriteUtf8(b, s, length);
    }

    private static int stringSize(String s) {
        int length = ByteBufUtil.utf8Bytes(s);
        return WmpWire.varintSize(length) + length;
    }

    /** Debug text longer than the limit is cut (at a character boundary) rather than failing the GOAWAY. */
    private static byte[] goAwayDebugBytes(String debug) {
        if (debug == null || debug.isEmpty()) {
            return NO_BYTES;
        }
        byte[] bytes = debug.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= WmpWire.MAX_GOAWAY_DEBUG_BYTES) {
            return bytes;
        }
        int cut = WmpWire.MAX_GOAWAY_DEBUG_BYTES;
        while (cut > 0 && (bytes[cut] & 0xC0) == 0x80) {
            cut--;
        }
        return Arrays.copyOf(bytes, cut);
    }

    private static void requireStreamId(int streamId) {
        if (streamId <= 0) {
            throw new IllegalArgumentException("stream id " + streamId + " (expected 1..2^31-1)");
        }
    }

    private static int flags(boolean endStream) {
        return endStream ? WmpWire.FLAG_END_STREAM : 0;
    }

    private static int bodyLength(ByteBuf body) {
        return body == null ? 0 : body.readableBytes();
    }

    private static ByteBuf bodyOf(WmpFrame frame) {
        return switch (frame) {
            case WmpRequest r -> r.body();
            case WmpResponse r -> r.body();
            case WmpData d -> d.body();
            default -> null;
        };
    }
}
