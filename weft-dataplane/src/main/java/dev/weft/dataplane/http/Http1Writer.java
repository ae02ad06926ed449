package dev.weft.dataplane.http;

import dev.weft.protocol.Bytes;
import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;

import java.nio.charset.StandardCharsets;

/**
 * Writes HTTP/1.1 heads, whole messages and chunk framing straight into buffers, for the proxy's writes to a client
 * or an app. Netty's encoders would make three writes of a whole message (head, body, empty last content), each a
 * trip down the pipeline and an entry in the channel's outbound buffer, and a head buffer of their own; this makes
 * one write and one buffer.
 *
 * <p>{@link #request(ByteBufAllocator, RequestHead, String, WmpHeaders, ByteBuf)},
 * {@link #response(ByteBufAllocator, ResponseHead, ByteBuf)}, {@link #chunk} and {@link #lastChunk} write Weft's own
 * heads ({@link RequestHead}, {@link ResponseHead}) and check every method, target, authority, name and value
 * first: their fields can come from a WMP peer, and a CR, LF or NUL written into a head would let that peer inject
 * header lines or a whole request (IllegalArgumentException instead, before any byte is written). Two things are
 * not scanned again: a field the WMP boundary vetted and nothing replaced since ({@link WmpHeaders#vetted}), and a
 * trace context held as numbers ({@link RequestHead#traceparent()}), whose text is made here.
 *
 * <p>Framing is the caller's: it passes the fields it wants sent, Content-Length or {@code transfer-encoding:
 * chunked} included; nothing here adds or checks them.
 *
 * <p>Thread: any; stateless. Buffers: a {@code body} or {@code data} passed in belongs to the method from then on
 * (copied and released, or made a component of the buffer returned); the caller owns the returned buffer and passes
 * it to a write, which releases it.
 */
public final class Http1Writer {
    /** Bodies up to this size are copied behind the head: a copy this small is cheaper than a second write. */
    public static final int COPY_LIMIT = 8 * 1024;

    private static final byte[] HTTP_1_1 = {'H', 'T', 'T', 'P', '/', '1', '.', '1'};
    private static final short CRLF = ('\r' << 8) | '\n';
    private static final short COLON_SP = (':' << 8) | ' ';

    /** {@code HTTP/1.1 <code> <reason>\r\n} for each status 100..599, made once: a status line costs a copy only. */
    private static final byte[][] STATUS_LINES = new byte[600][];
    /** Shared and never released (each use is a duplicate): the end of a chunk, and the last chunk. */
    private static final ByteBuf CRLF_BUF = constant("\r\n");
    private static final ByteBuf LAST_CHUNK = constant("0\r\n\r\n");
    private static final byte[] HOST_COLON_SP = {'h', 'o', 's', 't', ':', ' '};

    static {
        for (int code = 100; code < STATUS_LINES.length; code++) {
            STATUS_LINES[code] = ("HTTP/1.1 " + code + " " + HttpResponseStatus.valueOf(code).reasonPhrase() + "\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
        }
    }

    private Http1Writer() {}

    private static ByteBuf constant(String s) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        return Unpooled.unreleasableBuffer(Unpooled.directBuffer(b.length).writeBytes(b).asReadOnly());
    }

    /**
     * A request: {@code METHOD SP target SP HTTP/1.1}, {@code host: authority} (none when {@code authority} is
     * null), each of {@code fields}, a blank line, then {@code body} if given.
     *
     * @param head      supplies the method, the target ({@link RequestHead#path()}) and the trace context held as
     *                  numbers ({@link RequestHead#traceparent()}, written after the fields); its own authority and
     *                  fields are not used, so that a filtered copy can be passed beside it
     * @param fields    the fields to send, in order, framing included (no {@code host}: it comes from authority)
     * @param body      a whole body to write after the head, or null; up to {@link #COPY_LIMIT} bytes it is copied
     *                  behind the head, a larger one becomes the second component of a composite (no copy)
     * @throws IllegalArgumentException when the method is not a token, the target or authority holds a byte that is
     *                                  not visible ASCII (a target may hold non-ASCII characters: written as
     *                                  UTF-8), a name is not a token, a value holds CR, LF, NUL or a character
     *                                  above U+00FF, or a field is named host; {@code body} is released then too
     */
    public static ByteBuf request(ByteBufAllocator alloc, RequestHead head, String authority, WmpHeaders fields,
                                  ByteBuf body) {
        try {
            String method = head.method();
            String target = head.path();
            Traceparent tp = head.traceparent();
            int size = checkToken(method, "method") + 1 + checkTarget(target) + 1 + HTTP_1_1.length + 2
                    + (authority == null ? 0 : HOST_COLON_SP.length + checkAuthority(authority) + 2)
                    + checkFields(fields, true) + (tp == null ? 0 : Traceparent.LINE_LENGTH) + 2;
            ByteBuf out = alloc.directBuffer(size + smallBody(body));
            ByteBufUtil.writeAscii(out, method);
            out.writeByte(' ');
            if (isAscii(target)) {
                ByteBufUtil.writeAscii(out, target);
            } else {
                ByteBufUtil.writeUtf8(out, target);
            }
            out.writeByte(' ');
            out.writeBytes(HTTP_1_1);
            out.writeShort(CRLF);
            if (authority != null) {
                out.writeBytes(HOST_COLON_SP);
                ByteBufUtil.writeAscii(out, authority);
                out.writeShort(CRLF);
            }
            return finish(alloc, out, fields, tp, body);
        } catch (RuntimeException e) {
            release(body);
            throw e;
        }
    }

    /** {@link #request(ByteBufAllocator, RequestHead, String, WmpHeaders, ByteBuf)} with the head's own authority and fields. */
    public static ByteBuf request(ByteBufAllocator alloc, RequestHead head, ByteBuf body) {
        return request(alloc, head, head.authority(), head.fields(), body);
    }

    /** The head of a request whose body the caller streams after it ({@link #chunk}, or Content-Length bytes). */
    public static ByteBuf requestHead(ByteBufAllocator alloc, RequestHead head, String authority, WmpHeaders fields) {
        return request(alloc, head, authority, fields, null);
    }

    /**
     * An answer: {@code HTTP/1.1 <status> <reason>} (the reason is Netty's for the code), each field of
     * {@code head}, a blank line, then {@code body} if given (copied up to {@link #COPY_LIMIT}, else composed).
     *
     * @throws IllegalArgumentException when the status is outside 100..599, a name is not a token, or a value holds
     *                                  CR, LF, NUL or a character above U+00FF; {@code body} is released then too
     */
    public static ByteBuf response(ByteBufAllocator alloc, ResponseHead head, ByteBuf body) {
        try {
            int status = head.status();
            if (status < 100 || status >= STATUS_LINES.length) {
                throw new IllegalArgumentException("status " + status + " (expected 100..599)");
            }
            byte[] line = STATUS_LINES[status];
            ByteBuf out = alloc.directBuffer(line.length + checkFields(head.fields(), false) + 2 + smallBody(body));
            out.writeBytes(line);
            return finish(alloc, out, head.fields(), null, body);
        } catch (RuntimeException e) {
            release(body);
            throw e;
        }
    }

    /** The head of an answer whose body the caller streams after it. */
    public static ByteBuf responseHead(ByteBufAllocator alloc, ResponseHead head) {
        return response(alloc, head, null);
    }

    /**
     * One chunk of a chunked body: {@code <hex size> CRLF data CRLF}, as one buffer to write. Data up to
     * {@link #COPY_LIMIT} bytes is copied into it (cheaper than a composite of three); larger data becomes the
     * middle component of a composite, between a small prefix buffer and a shared CRLF, so it is never copied.
     * An empty {@code data} gives an empty buffer (a zero-size chunk would end the body).
     *
     * @param data released, or owned by the composite returned
     */
    public static ByteBuf chunk(ByteBufAllocator alloc, ByteBuf data) {
        int n = data.readableBytes();
        if (n == 0) {
            data.release();
            return Unpooled.EMPTY_BUFFER;
        }
        int digits = (Integer.SIZE - Integer.numberOfLeadingZeros(n) + 3) / 4;
        if (n <= COPY_LIMIT) {
            ByteBuf out = alloc.directBuffer(digits + 2 + n + 2);
            try {
                writeHex(out, n, digits);
                Bytes.append(out, data, data.readerIndex(), n);
                out.writeShort(CRLF);
                return out;
            } finally {
                data.release();
            }
        }
        ByteBuf prefix = alloc.directBuffer(digits + 2);
        writeHex(prefix, n, digits);
        CompositeByteBuf c = alloc.compositeDirectBuffer(3);
        return c.addComponents(true, prefix, data, CRLF_BUF.duplicate());
    }

    /** The last chunk and an empty trailer section, {@code 0 CRLF CRLF}: a shared buffer that writes may release. */
    public static ByteBuf lastChunk() {
        return LAST_CHUNK.duplicate();
    }

    private static void writeHex(ByteBuf out, int n, int digits) {
        for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
            out.writeByte("0123456789abcdef".charAt((n >>> shift) & 0xF));
        }
        out.writeShort(CRLF);
    }

    /**
     * Writes the fields, the trace context if any (made from numbers here, so nothing to check), and the blank line
     * behind the start line in {@code out}, then the body.
     */
    private static ByteBuf finish(ByteBufAllocator alloc, ByteBuf out, WmpHeaders fields, Traceparent tp,
                                  ByteBuf body) {
        for (int i = 0; i < fields.size(); i++) {
            writeField(out, fields.name(i), fields.value(i));
        }
        if (tp != null) {
            tp.writeLine(out);
        }
        out.writeShort(CRLF);
        if (body == null) {
            return out;
        }
        int n = body.readableBytes();
        if (n <= COPY_LIMIT) {
            Bytes.append(out, body, body.readerIndex(), n);
            body.release();
            return out;
        }
        return alloc.compositeDirectBuffer(2).addComponents(true, out, body);
    }

    /** The bytes a body adds to the head's buffer: all of it when copied, none when composed. */
    private static int smallBody(ByteBuf body) {
        return body == null || body.readableBytes() > COPY_LIMIT ? 0 : body.readableBytes();
    }

    private static void release(ByteBuf body) {
        if (body != null && body.refCnt() > 0) {
            body.release();
        }
    }

    /**
     * The bytes the fields take as header lines; throws if one could break out of its line. A field the WMP
     * boundary vetted and nothing replaced since ({@link WmpHeaders#vetted}) passed a stricter allow-list (a
     * lower-case token, field-content: one byte per char), so only its length is taken.
     */
    /** The bytes the fields take as lines; each is checked unless vetted, and with {@code noHost} none is a Host. */
    private static int checkFields(WmpHeaders fields, boolean noHost) {
        int size = 0;
        for (int i = 0; i < fields.size(); i++) {
            String name = fields.name(i);
            if (noHost && name.length() == 4 && name.equalsIgnoreCase("host")) {
                // A second Host would let the app and this hop route the request two ways.
                throw new IllegalArgumentException("a host field among the request's fields (expected the Host"
                        + " only as the authority argument)");
            }
            size += fields.vetted(i) ? name.length() + 4 + fields.value(i).length()
                    : checkToken(name, "header name") + 2 + checkValue(name, fields.value(i)) + 2;
        }
        return size;
    }

    private static int checkToken(String s, String what) {
        int n = s.length();
        if (n == 0) {
            throw new IllegalArgumentException("empty " + what + " (expected a token)");
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80 || !Http1Grammar.is((byte) c, Http1Grammar.TCHAR)) {
                throw new IllegalArgumentException(what + " " + Http1Grammar.quote(printable(s)) + " holds "
                        + charName(c) + " at index " + i
                        + " (expected a token: letters, digits and !#$%&'*+-.^_`|~)");
            }
        }
        return n;
    }

    /** A header value must not hold CR, LF or NUL (they would end its line: header injection) nor chars > U+00FF. */
    private static int checkValue(String name, String v) {
        int n = v.length();
        for (int i = 0; i < n; i++) {
            char c = v.charAt(i);
            if ((c <= '\r' && (c == '\r' || c == '\n' || c == 0)) || c > 0xFF) {
                throw new IllegalArgumentException("the value of header " + Http1Grammar.quote(name) + " holds "
                        + charName(c) + " at index " + i + (c > 0xFF
                        ? " (expected characters up to U+00FF: HTTP/1.1 writes each as one byte)"
                        : " (expected no CR, LF or NUL: one would end the header line early and let the sender inject fields)"));
            }
        }
        return n;
    }

    /** Visible ASCII only: a SP or control byte would end the request line early, or break it. */
    private static int checkTarget(String t) {
        int n = t.length();
        if (n == 0) {
            throw new IllegalArgumentException("empty request target (expected /path, or *)");
        }
        boolean ascii = true;
        for (int i = 0; i < n; i++) {
            char c = t.charAt(i);
            if (c <= 0x20 || c == 0x7F) {
                throw new IllegalArgumentException("request target " + Http1Grammar.quote(printable(t)) + " holds "
                        + charName(c) + " at index " + i + " (expected visible characters: percent-encode others)");
            }
            ascii &= c < 0x80;
        }
        return ascii ? n : ByteBufUtil.utf8Bytes(t);
    }

    private static int checkAuthority(String a) {
        int n = a.length();
        for (int i = 0; i < n; i++) {
            char c = a.charAt(i);
            if (c <= 0x20 || c >= 0x7F) {
                throw new IllegalArgumentException("authority " + Http1Grammar.quote(printable(a)) + " holds "
                        + charName(c) + " at index " + i + " (expected host[:port] in visible ASCII)");
            }
        }
        if (n == 0) {
            throw new IllegalArgumentException("empty authority (expected host[:port], or null for none)");
        }
        return n;
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    private static String charName(char c) {
        return switch (c) {
            case '\r' -> "CR";
            case '\n' -> "LF";
            case 0 -> "NUL";
            case ' ' -> "SP";
            default -> String.format("U+%04X", (int) c);
        };
    }

    /** The string with control characters shown as '?', for a message that must itself stay on one line. */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 65));
        for (int i = 0; i < s.length() && i < 65; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7F ? '?' : c);
        }
        return b.toString();
    }

    /** One header line, {@code name: value} and CRLF (the caller checked both). */
    private static void writeField(ByteBuf out, CharSequence name, CharSequence value) {
        ByteBufUtil.writeAscii(out, name);
        out.writeShort(COLON_SP);
        ByteBufUtil.writeAscii(out, value);
        out.writeShort(CRLF);
    }
}
