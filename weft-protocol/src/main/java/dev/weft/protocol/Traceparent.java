package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;

/**
 * A W3C {@code traceparent} (version 00) held as numbers: what a request head carries in place of the 55-character
 * field, so that the trace context is not made into a String, scanned by each boundary's allow-list and parsed again
 * at every hop. The wire does not change: the codecs write it as the same field ({@code traceparent: 00-…}) into
 * WMP and HTTP/1.1 heads, and the WMP decoder reads a field back into numbers only when it is exactly the form
 * written here ({@link #read}); any other value stays a field and is judged as one.
 *
 * <p>Immutable; made and read on the Worker loop that carries the request. Buffers: {@link #write} and
 * {@link #writeLine} write into the caller's buffer and {@link #read} reads from it at an absolute index; none keeps,
 * retains or releases a buffer.
 *
 * @param traceHi  the trace id's high 64 bits
 * @param traceLo  the trace id's low 64 bits (trace id 0 is invalid: not both 0)
 * @param parentId the span this context names as the next hop's parent (not 0)
 * @param flags    the trace flags byte (bit 0: sampled), 0..255
 */
public record Traceparent(long traceHi, long traceLo, long parentId, int flags) {
    /** Characters of a version 00 value: {@code 00-} 32 hex {@code -} 16 hex {@code -} 2 hex. */
    public static final int LENGTH = 55;
    /** Bytes a header line takes: {@code traceparent: }, the value, CRLF. */
    public static final int LINE_LENGTH = 13 + LENGTH + 2;
    public static final String NAME = "traceparent";

    private static final byte[] LINE_NAME = "traceparent: ".getBytes(StandardCharsets.US_ASCII);

    public Traceparent {
        if ((traceHi == 0 && traceLo == 0) || parentId == 0 || flags < 0 || flags > 0xFF) {
            throw new IllegalArgumentException("traceparent " + Long.toHexString(traceHi) + "/"
                    + Long.toHexString(traceLo) + " parent " + Long.toHexString(parentId) + " flags " + flags
                    + " (expected a trace id and a parent id not 0, flags 0..255)");
        }
    }

    public boolean sampled() {
        return (flags & 1) != 0;
    }

    /** Writes the 55 value bytes at the writer index. */
    public void write(ByteBuf out) {
        out.ensureWritable(LENGTH);
        int at = out.writerIndex();
        out.setShort(at, ('0' << 8) | '0');
        out.setByte(at + 2, '-');
        hex(out, at + 3, traceHi);
        hex(out, at + 19, traceLo);
        out.setByte(at + 35, '-');
        hex(out, at + 36, parentId);
        out.setByte(at + 52, '-');
        out.setByte(at + 53, Hex.DIGITS[flags >>> 4]);
        out.setByte(at + 54, Hex.DIGITS[flags & 0xF]);
        out.writerIndex(at + LENGTH);
    }

    /** Writes {@code traceparent: <value>} and CRLF: the line an HTTP/1.1 head carries it as. */
    public void writeLine(ByteBuf out) {
        out.writeBytes(LINE_NAME);
        write(out);
        out.writeShort(('\r' << 8) | '\n');
    }

    /** 16 hex digits as two ints of ASCII each: one setLong, not 16 setBytes. */
    private static void hex(ByteBuf out, int at, long v) {
        out.setLong(at, Hex.digits8((int) (v >>> 32)));
        out.setLong(at + 8, Hex.digits8((int) v));
    }

    /**
     * The context in {@code in}'s 55 bytes from {@code at} (indexes unchanged), or null unless they are exactly a
     * version 00 value in lower-case hex with a trace id and a parent id other than 0: the only form that
     * {@link #write} gives back byte for byte. Null is not an error: the caller keeps the bytes as a field.
     */
    public static Traceparent read(ByteBuf in, int at) {
        if (in.getByte(at) != '0' || in.getByte(at + 1) != '0' || in.getByte(at + 2) != '-' || in.getByte(at + 35) != '-'
                || in.getByte(at + 52) != '-') {
            return null;
        }
        long hi1 = Hex.parse8(in.getLong(at + 3));
        long hi2 = Hex.parse8(in.getLong(at + 11));
        long lo1 = Hex.parse8(in.getLong(at + 19));
        long lo2 = Hex.parse8(in.getLong(at + 27));
        long p1 = Hex.parse8(in.getLong(at + 36));
        long p2 = Hex.parse8(in.getLong(at + 44));
        int f = Hex.value(in.getByte(at + 53)) << 4 | Hex.value(in.getByte(at + 54));
        return of(hi1, hi2, lo1, lo2, p1, p2, f);
    }

    /**
     * The context a {@code traceparent} value from outside gives, by W3C Trace Context's rules, or null when they say
     * to ignore it: a version of two lower-case hex digits other than {@code ff}; version 00 exactly 55 characters; a
     * later version at least 55, with a {@code -} after them when longer (its extra fields are not read, and the
     * context goes on as version 00); lower-case hex ids, neither all zeros; two hex digits of flags.
     */
    public static Traceparent parse(CharSequence v) {
        int n = v.length();
        if (n < LENGTH || v.charAt(2) != '-' || v.charAt(35) != '-' || v.charAt(52) != '-') {
            return null;
        }
        long version = Hex.parse(v, 0, 2, -1);
        if (version < 0 || version == 0xFF || (version == 0 && n != LENGTH) || (n > LENGTH && v.charAt(LENGTH) != '-')) {
            return null;
        }
        long flags = Hex.parse(v, 53, 2, -1);
        // One pass over each id, 8 digits at a time (each half is -1 if a digit is not hex), not a check and a parse.
        return of(Hex.parse8(v, 3), Hex.parse8(v, 11), Hex.parse8(v, 19), Hex.parse8(v, 27), Hex.parse8(v, 36),
                Hex.parse8(v, 44), (int) flags);
    }

    /** The context from its ids' 8-digit halves and flags, each -1 if it was not hex; null unless all valid. */
    private static Traceparent of(long hi1, long hi2, long lo1, long lo2, long p1, long p2, int flags) {
        if ((hi1 | hi2 | lo1 | lo2 | p1 | p2 | flags) < 0) {
            return null;
        }
        long hi = hi1 << 32 | hi2;
        long lo = lo1 << 32 | lo2;
        long parent = p1 << 32 | p2;
        if ((hi == 0 && lo == 0) || parent == 0) {
            return null;
        }
        return new Traceparent(hi, lo, parent, flags);
    }

    /** The value as text, as it is written ({@code 00-<trace id>-<parent id>-<flags>}). */
    @Override
    public String toString() {
        byte[] b = new byte[LENGTH];
        ByteBuf buf = Unpooled.wrappedBuffer(b);
        buf.writerIndex(0);
        write(buf);
        return new String(b, StandardCharsets.ISO_8859_1);
    }
}
