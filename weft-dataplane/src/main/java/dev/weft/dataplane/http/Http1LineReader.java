package dev.weft.dataplane.http;

import io.netty.buffer.ByteBuf;

import static dev.weft.dataplane.http.Http1Grammar.CR;
import static dev.weft.dataplane.http.Http1Grammar.LF;

/**
 * Takes the CRLF-terminated lines of an HTTP/1.1 message (start line, field lines, chunk-size lines, trailer lines)
 * out of a decoder's cumulation, each copied once into one scratch array where the parsers read it with table
 * lookups (no String per line, no bounds check of a ByteBuf per byte). A line split across reads is searched for its
 * LF only in the bytes that are new, and never further than its limit allows: a line over its limit is refused
 * before its end arrives.
 *
 * <p>Thread: its decoder's, the connection's event loop; one per decoder, not thread safe. Buffers: it reads the
 * ByteBuf it is given and moves its reader index past each complete line; it holds none (the cumulation belongs to
 * ByteToMessageDecoder, which releases it).
 */
final class Http1LineReader {
    /** No complete line yet: more input is needed. */
    static final int INCOMPLETE = -1;
    /** The line is longer than its limit (its end may not have arrived yet). */
    static final int TOO_LONG = -2;
    /** The line ends with a bare LF, not CRLF. */
    static final int BARE_LF = -3;

    /** The current line, CRLF excluded; grows to the longest line seen (at most a head's limit). */
    private byte[] line = new byte[256];
    /** Bytes from the reader index already searched for LF without finding one (so a split line is not rescanned). */
    private int scanned;

    /**
     * The next line's length without its CRLF, copied into {@link #line()} and consumed from {@code in}; or
     * {@link #INCOMPLETE}, {@link #TOO_LONG} or {@link #BARE_LF}, with nothing consumed.
     *
     * @param limit the longest line allowed, CRLF excluded; negative when not even a CRLF fits
     */
    int read(ByteBuf in, int limit) {
        int start = in.readerIndex();
        int readable = in.readableBytes();
        // A line of `limit` bytes ends with its LF at offset limit + 1: no need to look further for it.
        int searchEnd = (int) Math.min(readable, limit + 2L);
        int lf = scanned < searchEnd ? in.indexOf(start + scanned, start + searchEnd, LF) : -1;
        if (lf < 0) {
            if (readable > limit + 1) {
                return TOO_LONG;
            }
            scanned = searchEnd;
            return INCOMPLETE;
        }
        int p = lf - start;
        if (p == 0 || in.getByte(lf - 1) != CR) {
            return BARE_LF;
        }
        int n = p - 1;
        if (line.length < n) {
            line = new byte[Math.max(n, line.length * 2)];
        }
        in.getBytes(start, line, 0, n);
        in.skipBytes(p + 1);
        scanned = 0;
        return n;
    }

    /** The line {@link #read} returned the length of; valid until the next call. */
    byte[] line() {
        return line;
    }
}
