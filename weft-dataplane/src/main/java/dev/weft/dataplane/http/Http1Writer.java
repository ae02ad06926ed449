package dev.weft.dataplane.http;

import dev.weft.protocol.Bytes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;

/**
 * Writes a whole, fixed-length HTTP/1.1 message (head and body) into one buffer, for the proxy's most common case: an
 * answer or request whose body is already complete and small. Netty's encoders would make three writes of it (head,
 * body, empty last content), each a trip down the pipeline and an entry in the channel's outbound buffer, and a
 * head buffer of their own; this makes one write and one buffer. The bytes are what Netty's encoders write for the
 * same message: start line, each header as {@code name: value}, a blank line, the body.
 *
 * <p>The caller sets the framing headers first (Content-Length, Connection): nothing here adds or checks them. Header
 * names and values are written as they are: they come from Netty's decoder or WMP's, which both refuse CR and LF in
 * them (the same trust Netty's encoder puts in them).
 *
 * <p>Thread: any; stateless. Buffers: {@code body} is copied and released here; the caller owns the returned buffer
 * and passes it to a write, which releases it.
 */
public final class Http1Writer {
    /** Bodies up to this size are copied behind the head: a copy this small is cheaper than a second write. */
    public static final int COPY_LIMIT = 8 * 1024;

    private static final byte[] HTTP_1_1 = {'H', 'T', 'T', 'P', '/', '1', '.', '1'};
    private static final short CRLF = ('\r' << 8) | '\n';
    private static final short COLON_SP = (':' << 8) | ' ';

    private Http1Writer() {}

    /**
     * Whether {@link #message} takes this message: a body of at most {@link #COPY_LIMIT}, and for a request a target
     * in origin form ({@code /path?query}, the usual case); other forms are left to Netty's encoder, which normalises
     * them.
     */
    public static boolean fits(HttpMessage m, ByteBuf body) {
        if (body.readableBytes() > COPY_LIMIT) {
            return false;
        }
        return !(m instanceof HttpRequest r) || r.uri().startsWith("/");
    }

    /**
     * Head and body of {@code m} in one buffer ({@link #fits} must be true). {@code body} is released.
     *
     * @param m an {@link HttpRequest} (start line: method, target, version) or {@link HttpResponse} (version, status)
     */
    public static ByteBuf message(ByteBufAllocator alloc, HttpMessage m, ByteBuf body) {
        int n = body.readableBytes();
        ByteBuf out = alloc.directBuffer(estimate(m) + n);
        try {
            if (m instanceof HttpRequest r) {
                ByteBufUtil.writeAscii(out, r.method().asciiName());
                out.writeByte(' ');
                ByteBufUtil.writeUtf8(out, r.uri()); // as Netty's encoder: a raw UTF-8 target passes unchanged
                out.writeByte(' ');
                out.writeBytes(HTTP_1_1);
            } else {
                HttpResponse r = (HttpResponse) m;
                out.writeBytes(HTTP_1_1);
                out.writeByte(' ');
                ByteBufUtil.writeAscii(out, r.status().codeAsText());
                out.writeByte(' ');
                ByteBufUtil.writeAscii(out, r.status().reasonPhrase());
            }
            out.writeShort(CRLF);
            WmpHeads.writeFields(m, out); // from the WMP list as it is when m is a WmpHeads head
            out.writeShort(CRLF);
            Bytes.append(out, body, body.readerIndex(), n);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        } finally {
            body.release();
        }
    }

    /** One header line, {@code name: value} and CRLF, as Netty's encoder writes it. */
    static void writeField(ByteBuf out, CharSequence name, CharSequence value) {
        ByteBufUtil.writeAscii(out, name);
        out.writeShort(COLON_SP);
        ByteBufUtil.writeAscii(out, value);
        out.writeShort(CRLF);
    }

    /** A first guess at the head's size; the buffer grows if the guess is short. */
    private static int estimate(HttpMessage m) {
        int size = 64;
        if (m instanceof HttpRequest r) {
            size += r.uri().length();
        }
        return size + WmpHeads.size(m) * 48;
    }
}
