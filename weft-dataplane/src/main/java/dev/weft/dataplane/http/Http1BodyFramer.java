package dev.weft.dataplane.http;

import io.netty.buffer.ByteBuf;

import java.util.List;

import static dev.weft.dataplane.http.Http1Grammar.CR;
import static dev.weft.dataplane.http.Http1Grammar.FIELD;
import static dev.weft.dataplane.http.Http1Grammar.HEX;
import static dev.weft.dataplane.http.Http1Grammar.HTAB;
import static dev.weft.dataplane.http.Http1Grammar.LF;
import static dev.weft.dataplane.http.Http1Grammar.QDTEXT;
import static dev.weft.dataplane.http.Http1Grammar.SP;
import static dev.weft.dataplane.http.Http1Grammar.TCHAR;
import static dev.weft.dataplane.http.Http1Grammar.describe;
import static dev.weft.dataplane.http.Http1Grammar.is;
import static dev.weft.dataplane.http.Http1Grammar.quote;

/**
 * The body of one message, once its head has said how it is framed (RFC 9112 §6): a Content-Length body, a chunked
 * body (chunk-size lines with their extensions, each chunk's data and CRLF, then the trailer section, validated and
 * dropped), or an answer's body that runs until the connection closes. It passes the body on as it arrives, in pieces
 * of at most {@link HttpLimits#MAX_CHUNK_BYTES}, de-chunked, and says when the body is complete or what rule it broke;
 * the decoder emits END, or the rejection.
 *
 * <p>Thread: its decoder's, the connection's event loop; one per decoder, not thread safe. Buffers: each body piece it
 * adds to {@code out} is a retained slice of the decoder's cumulation (no copy), owned from then on by the receiver,
 * which releases it; it holds no buffer itself.
 */
final class Http1BodyFramer {
    /** The body is not complete: more input is needed. */
    static final int MORE = 0;
    /** The body is complete (for a chunked one: its trailer section too). */
    static final int DONE = 1;
    /** The body broke a rule: {@link #problem()} says which. */
    static final int BROKEN = 2;

    private static final int FIXED = 0;
    private static final int CHUNK_SIZE = 1;
    private static final int CHUNK_DATA = 2;
    private static final int CHUNK_CRLF = 3;
    private static final int TRAILERS = 4;
    private static final int UNTIL_CLOSE = 5;

    private final Http1LineReader lines;
    /** Validates the trailer section's field lines. */
    private final Http1FieldParser trailers;
    private int phase;
    /** Body bytes left: of a Content-Length body, or of the current chunk. */
    private long remaining;
    /** Bytes of the trailer section so far, CRLFs included. */
    private int trailerBytes;
    private Http1Messages.Rejected problem;

    Http1BodyFramer(Http1LineReader lines, Http1FieldParser trailers) {
        this.lines = lines;
        this.trailers = trailers;
    }

    /** A body of exactly {@code length} bytes, length > 0, follows. */
    void fixed(long length) {
        remaining = length;
        phase = FIXED;
    }

    /** A chunked body follows. */
    void chunked() {
        phase = CHUNK_SIZE;
    }

    /** The body is every byte until the connection closes (answers only). */
    void untilClose() {
        remaining = Long.MAX_VALUE;
        phase = UNTIL_CLOSE;
    }

    /** Reads what {@code in} holds of the body: {@link #MORE}, {@link #DONE} (nothing of the next message read) or {@link #BROKEN}. */
    int decode(ByteBuf in, List<Object> out) {
        for (;;) {
            switch (phase) {
                case FIXED -> {
                    if (!in.isReadable()) {
                        return MORE;
                    }
                    if (slice(in, out)) {
                        return DONE;
                    }
                }
                case CHUNK_SIZE -> {
                    int n = lines.read(in, HttpLimits.MAX_CHUNK_LINE);
                    if (n < 0) {
                        return n == Http1LineReader.INCOMPLETE ? MORE : lineBroken(n);
                    }
                    if (!chunkSize(lines.line(), n)) {
                        return BROKEN;
                    }
                }
                case CHUNK_DATA -> {
                    if (!in.isReadable()) {
                        return MORE;
                    }
                    if (slice(in, out)) {
                        phase = CHUNK_CRLF;
                    }
                }
                case CHUNK_CRLF -> {
                    int r = in.readableBytes();
                    if (r == 0) {
                        return MORE;
                    }
                    int i = in.readerIndex();
                    if (in.getByte(i) != CR || (r > 1 && in.getByte(i + 1) != LF)) {
                        return broken(400, "bad-request", "expected CRLF after a chunk's data, found "
                                + describe(in.getByte(in.getByte(i) != CR ? i : i + 1))
                                + " (the chunk is longer than its chunk-size says)");
                    }
                    if (r == 1) {
                        return MORE;
                    }
                    in.skipBytes(2);
                    phase = CHUNK_SIZE;
                }
                case TRAILERS -> {
                    int n = lines.read(in, HttpLimits.MAX_HEADER_BYTES - trailerBytes - 2);
                    if (n < 0) {
                        return n == Http1LineReader.INCOMPLETE ? MORE : lineBroken(n);
                    }
                    trailerBytes += n + 2;
                    if (n == 0) {
                        return DONE;
                    }
                    Http1Messages.Rejected r = trailers.field(lines.line(), n, true);
                    if (r != null) {
                        problem = r;
                        return BROKEN;
                    }
                }
                default -> { // UNTIL_CLOSE
                    if (!in.isReadable()) {
                        return MORE;
                    }
                    slice(in, out);
                }
            }
        }
    }

    /**
     * The input ended before {@link #DONE}: null when that ends the body (it runs until the close), else what to
     * refuse the message cut short with.
     */
    Http1Messages.Rejected cutShort() {
        return switch (phase) {
            case UNTIL_CLOSE -> null;
            case FIXED -> new Http1Messages.Rejected(400, "bad-request", "the connection closed " + remaining
                    + " bytes before the end of a Content-Length body");
            default -> new Http1Messages.Rejected(400, "bad-request",
                    "the connection closed before the last chunk (0) of a chunked body");
        };
    }

    /** The rule the body broke, once {@link #decode} returned {@link #BROKEN}. */
    Http1Messages.Rejected problem() {
        return problem;
    }

    private int broken(int status, String kind, String message) {
        problem = new Http1Messages.Rejected(status, kind, message);
        return BROKEN;
    }

    /** A chunk-size or trailer line the line reader refused ({@code code} is TOO_LONG or BARE_LF). */
    private int lineBroken(int code) {
        if (code == Http1LineReader.BARE_LF) {
            return broken(400, "bad-request", Http1Decoder.BARE_LF_MESSAGE);
        }
        if (phase == CHUNK_SIZE) {
            return broken(400, "bad-request", "a chunk-size line is longer than " + HttpLimits.MAX_CHUNK_LINE
                    + " bytes (expected a hex size and short extensions)");
        }
        return broken(431, "headers-too-large", "the trailer section is larger than " + HttpLimits.MAX_HEADER_BYTES
                + " bytes (expected at most " + HttpLimits.MAX_HEADER_BYTES + ")");
    }

    /**
     * A chunk-size line (RFC 9112 §7.1): {@code 1*HEXDIG *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )};
     * false when it broke a rule. Extensions are validated and dropped: no receiver of Weft's uses them.
     */
    private boolean chunkSize(byte[] a, int n) {
        int i = 0;
        long size = 0;
        while (i < n && is(a[i], HEX)) {
            size = (size << 4) | Character.digit(a[i], 16);
            i++;
        }
        if (i == 0) {
            broken(400, "bad-request", "chunk size " + quote(a, 0, n)
                    + " is not a hexadecimal number (expected HEX digits, then optional ;extensions)");
            return false;
        }
        if (i > HttpLimits.MAX_CHUNK_SIZE_DIGITS) {
            broken(400, "bad-request", "a chunk size of " + i + " hex digits (expected at most "
                    + HttpLimits.MAX_CHUNK_SIZE_DIGITS + ")");
            return false;
        }
        String bad = chunkExtensions(a, i, n);
        if (bad != null) {
            broken(400, "bad-request", bad + " in the chunk-size line " + quote(a, 0, n)
                    + " (expected HEX digits, then optional ;name or ;name=value extensions)");
            return false;
        }
        if (size == 0) {
            phase = TRAILERS;
            trailerBytes = 0;
            trailers.beginTrailers();
        } else {
            remaining = size;
            phase = CHUNK_DATA;
        }
        return true;
    }

    /** Null when {@code a[i, n)} is a valid chunk-ext, else what is wrong with it. */
    private static String chunkExtensions(byte[] a, int i, int n) {
        while (i < n) {
            i = skipBws(a, i, n);
            if (i == n || a[i] != ';') {
                return i == n ? "whitespace at the end" : "invalid byte " + describe(a[i]) + " after the size";
            }
            i = skipBws(a, i + 1, n);
            int ns = i;
            while (i < n && is(a[i], TCHAR)) {
                i++;
            }
            if (i == ns) {
                return "an extension without a name";
            }
            int j = skipBws(a, i, n);
            if (j < n && a[j] == '=') {
                i = skipBws(a, j + 1, n);
                if (i < n && a[i] == '"') {
                    for (i++; i < n && a[i] != '"'; i++) {
                        if (a[i] == '\\' && i + 1 < n && is(a[i + 1], FIELD)) {
                            i++; // quoted-pair
                        } else if (!is(a[i], QDTEXT)) {
                            return "invalid byte " + describe(a[i]) + " in a quoted extension value";
                        }
                    }
                    if (i == n) {
                        return "an unterminated quoted extension value";
                    }
                    i++;
                } else {
                    int vs = i;
                    while (i < n && is(a[i], TCHAR)) {
                        i++;
                    }
                    if (i == vs) {
                        return "an extension '=' without a value";
                    }
                }
            }
        }
        return null;
    }

    private static int skipBws(byte[] a, int i, int n) {
        while (i < n && (a[i] == SP || a[i] == HTAB)) {
            i++;
        }
        return i;
    }

    /** Emits up to {@link #remaining} readable body bytes (at most one piece); true when none remain. */
    private boolean slice(ByteBuf in, List<Object> out) {
        int n = (int) Math.min(Math.min(remaining, in.readableBytes()), HttpLimits.MAX_CHUNK_BYTES);
        out.add(in.readRetainedSlice(n));
        remaining -= n;
        return remaining == 0;
    }
}
