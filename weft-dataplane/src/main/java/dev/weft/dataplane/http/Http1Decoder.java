package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static dev.weft.dataplane.http.Http1Grammar.CR;
import static dev.weft.dataplane.http.Http1Grammar.DIGIT;
import static dev.weft.dataplane.http.Http1Grammar.FIELD;
import static dev.weft.dataplane.http.Http1Grammar.HEX;
import static dev.weft.dataplane.http.Http1Grammar.HTAB;
import static dev.weft.dataplane.http.Http1Grammar.LF;
import static dev.weft.dataplane.http.Http1Grammar.LOWER;
import static dev.weft.dataplane.http.Http1Grammar.QDTEXT;
import static dev.weft.dataplane.http.Http1Grammar.SP;
import static dev.weft.dataplane.http.Http1Grammar.TCHAR;
import static dev.weft.dataplane.http.Http1Grammar.describe;
import static dev.weft.dataplane.http.Http1Grammar.is;
import static dev.weft.dataplane.http.Http1Grammar.quote;

/**
 * What the request and answer decoders share: the lines of a head, header fields, and the two body framings
 * (Content-Length and chunked) plus the close-delimited body of an answer. The subclasses parse their start line and
 * decide, at the end of the head, what the message is and how its body is framed ({@link Http1RequestDecoder},
 * {@link Http1ResponseDecoder}); see {@link Http1Messages} for what they emit.
 *
 * <p>Why a ByteToMessageDecoder: its cumulation is the read buffer itself whenever nothing is left over from the
 * previous read, so the body slices this passes on are views of the socket's buffer (no copy); bytes are copied only
 * when a line or a chunk-size was split across reads. Each complete line is copied once into a scratch array and
 * parsed there with table lookups (no per-line String, no per-byte bounds check of a ByteBuf); a header value costs
 * one String unless it is a common one ({@link Http1Grammar}).
 *
 * <p>Rejection: every rule broken emits one {@link Http1Messages.Rejected} and moves to a state that discards (and so
 * releases, through the cumulation) every later byte; nothing else is emitted after it.
 *
 * <p>Thread: the channel's event loop, like every decoder; not thread safe. Buffers: the cumulation belongs to
 * ByteToMessageDecoder, which releases it; each body ByteBuf emitted is a retained slice of it that the receiver
 * owns and must release. Nothing else here holds a buffer.
 */
abstract class Http1Decoder extends ByteToMessageDecoder {
    private static final int START = 0;
    private static final int FIELDS = 1;
    private static final int FIXED = 2;
    private static final int CHUNK_SIZE = 3;
    private static final int CHUNK_DATA = 4;
    private static final int CHUNK_CRLF = 5;
    private static final int TRAILERS = 6;
    private static final int UNTIL_CLOSE = 7;
    private static final int REJECTED = 8;
    private static final int CLOSED = 9;

    private static final byte[] CHUNKED = {'c', 'h', 'u', 'n', 'k', 'e', 'd'};
    private static final byte[] CLOSE = {'c', 'l', 'o', 's', 'e'};
    private static final byte[] KEEP_ALIVE = {'k', 'e', 'e', 'p', '-', 'a', 'l', 'i', 'v', 'e'};
    private static final int NAME_CACHE = 16;
    private static final int NAME_CACHE_MAX_LENGTH = 64;

    private int state = START;
    /** The current line, CRLF excluded; grows to the longest line seen (at most a head's limit). */
    private byte[] line = new byte[256];
    /** Bytes from the reader index already searched for LF without finding one (so a split line is not rescanned). */
    private int scanned;
    /** Bytes of the current head, or trailer section, so far, CRLFs included. */
    private int headBytes;
    private int fieldCount;
    /** Body bytes left: of a Content-Length body, or of the current chunk. */
    private long remaining;

    // What the current head's fields said; reset by beginHead.
    /** The head's fields, or null when they are validated only (an interim answer). */
    private WmpHeaders fields;
    private boolean http10;
    private int contentLengthFields;
    private long contentLength;
    private String contentLengthError;
    private int transferEncodingFields;
    private String transferEncodingOther;
    private boolean connectionClose;
    private boolean connectionKeepAlive;

    /** Header names not in {@link Http1Grammar}, the last few seen: a client sends the same custom names each time. */
    private byte[][] nameCacheBytes;
    private String[] nameCacheNames;

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        for (;;) {
            switch (state) {
                case START -> {
                    int n = readLine(in, out);
                    if (n < 0) {
                        if (state == START) {
                            return;
                        }
                    } else if (n == 0) {
                        // RFC 9112 §2.2: a CRLF before a start line (after a body, from old clients) is skipped.
                        headBytes += 2;
                    } else {
                        headBytes += n + 2;
                        startLine(line, n, out);
                    }
                }
                case FIELDS -> {
                    int n = readLine(in, out);
                    if (n < 0) {
                        if (state == FIELDS) {
                            return;
                        }
                    } else {
                        headBytes += n + 2;
                        if (n == 0) {
                            endOfHead(out);
                        } else {
                            field(line, n, out, false);
                        }
                    }
                }
                case FIXED -> {
                    if (!in.isReadable()) {
                        return;
                    }
                    if (slice(in, out)) {
                        messageDone(out);
                    }
                }
                case CHUNK_SIZE -> {
                    int n = readLine(in, out);
                    if (n < 0) {
                        if (state == CHUNK_SIZE) {
                            return;
                        }
                    } else {
                        chunkSize(line, n, out);
                    }
                }
                case CHUNK_DATA -> {
                    if (!in.isReadable()) {
                        return;
                    }
                    if (slice(in, out)) {
                        state = CHUNK_CRLF;
                    }
                }
                case CHUNK_CRLF -> {
                    int r = in.readableBytes();
                    if (r == 0) {
                        return;
                    }
                    int i = in.readerIndex();
                    if (in.getByte(i) != CR || (r > 1 && in.getByte(i + 1) != LF)) {
                        reject(out, 400, "bad-request", "expected CRLF after a chunk's data, found "
                                + describe(in.getByte(in.getByte(i) != CR ? i : i + 1))
                                + " (the chunk is longer than its chunk-size says)");
                    } else if (r == 1) {
                        return;
                    } else {
                        in.skipBytes(2);
                        state = CHUNK_SIZE;
                    }
                }
                case TRAILERS -> {
                    int n = readLine(in, out);
                    if (n < 0) {
                        if (state == TRAILERS) {
                            return;
                        }
                    } else {
                        headBytes += n + 2;
                        if (n == 0) {
                            messageDone(out);
                        } else {
                            field(line, n, out, true);
                        }
                    }
                }
                case UNTIL_CLOSE -> {
                    if (!in.isReadable()) {
                        return;
                    }
                    slice(in, out);
                }
                default -> { // REJECTED, CLOSED: the framing can no longer be trusted, so nothing more is read
                    in.skipBytes(in.readableBytes());
                    return;
                }
            }
        }
    }

    /**
     * The end of input (the peer closed, or shut its output down): a close-delimited body ends here; a message cut
     * short is rejected; between messages nothing is emitted (the channel's inactivity says the rest).
     */
    @Override
    protected final void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.isReadable()) {
            decode(ctx, in, out);
        }
        int s = state;
        if (s == REJECTED || s == CLOSED) {
            return;
        }
        switch (s) {
            case START -> {
                if (in.isReadable()) {
                    reject(out, 400, "bad-request", "the connection closed in the middle of a start line");
                }
            }
            case FIELDS -> reject(out, 400, "bad-request", "the connection closed in the middle of a head");
            case FIXED -> reject(out, 400, "bad-request", "the connection closed " + remaining
                    + " bytes before the end of a Content-Length body");
            case UNTIL_CLOSE -> out.add(Http1Messages.END);
            default -> reject(out, 400, "bad-request",
                    "the connection closed before the last chunk (0) of a chunked body");
        }
        state = CLOSED;
        in.skipBytes(in.readableBytes());
    }

    /**
     * The next line's length without its CRLF, copied into {@link #line}, and consumed from {@code in}; or -1 when it
     * is not complete yet, or broke a rule (then the state is REJECTED).
     */
    private int readLine(ByteBuf in, List<Object> out) {
        int start = in.readerIndex();
        int readable = in.readableBytes();
        int limit = lineLimit();
        // A line of `limit` bytes ends with its LF at offset limit + 1: no need to look further for it.
        int searchEnd = (int) Math.min(readable, limit + 2L);
        int lf = scanned < searchEnd ? in.indexOf(start + scanned, start + searchEnd, LF) : -1;
        if (lf < 0) {
            if (readable > limit + 1) {
                lineTooLong(out);
                return -1;
            }
            scanned = searchEnd;
            return -1;
        }
        int p = lf - start;
        if (p == 0 || in.getByte(lf - 1) != CR) {
            reject(out, 400, "bad-request", "a bare LF ends a line (expected CRLF at the end of every line)");
            return -1;
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

    /** The longest line the current state allows, CRLF excluded; negative when not even a CRLF fits. */
    private int lineLimit() {
        return switch (state) {
            case START -> Math.min(HttpLimits.MAX_INITIAL_LINE, HttpLimits.MAX_HEADER_BYTES - headBytes - 2);
            case CHUNK_SIZE -> HttpLimits.MAX_CHUNK_LINE;
            default -> HttpLimits.MAX_HEADER_BYTES - headBytes - 2; // FIELDS, TRAILERS
        };
    }

    private void lineTooLong(List<Object> out) {
        switch (state) {
            case START -> {
                if (HttpLimits.MAX_HEADER_BYTES - headBytes - 2 >= HttpLimits.MAX_INITIAL_LINE) {
                    reject(out, 414, "uri-too-long", "the start line is longer than "
                            + HttpLimits.MAX_INITIAL_LINE + " bytes (expected at most " + HttpLimits.MAX_INITIAL_LINE
                            + ")");
                } else {
                    headTooLarge(out);
                }
            }
            case CHUNK_SIZE -> reject(out, 400, "bad-request", "a chunk-size line is longer than "
                    + HttpLimits.MAX_CHUNK_LINE + " bytes (expected a hex size and short extensions)");
            case TRAILERS -> reject(out, 431, "headers-too-large", "the trailer section is larger than "
                    + HttpLimits.MAX_HEADER_BYTES + " bytes (expected at most " + HttpLimits.MAX_HEADER_BYTES + ")");
            default -> headTooLarge(out);
        }
    }

    private void headTooLarge(List<Object> out) {
        reject(out, 431, "headers-too-large", "the head is larger than " + HttpLimits.MAX_HEADER_BYTES
                + " bytes (expected at most " + HttpLimits.MAX_HEADER_BYTES + ", start line and fields together)");
    }

    /** One header or trailer line, {@code a[0, n)} with n > 0. */
    private void field(byte[] a, int n, List<Object> out, boolean trailer) {
        if (a[0] == SP || a[0] == HTAB) {
            reject(out, 400, "bad-request", "a header line starts with whitespace: line folding (obs-fold) is not"
                    + " accepted (expected each field as name: value on one line)");
            return;
        }
        if (++fieldCount > HttpLimits.MAX_HEADER_FIELDS) {
            reject(out, 431, "headers-too-large", "more than " + HttpLimits.MAX_HEADER_FIELDS + " header fields"
                    + (trailer ? " in the trailer section" : "") + " (expected at most "
                    + HttpLimits.MAX_HEADER_FIELDS + ")");
            return;
        }
        int h = 0;
        int i = 0;
        while (i < n && is(a[i], TCHAR)) {
            h = Http1Grammar.hashStep(h, a[i]);
            i++;
        }
        if (i == n || a[i] != ':' || i == 0) {
            String what;
            if (i == n) {
                what = "a header line without a colon: " + quote(a, 0, n) + " (expected name: value)";
            } else if (i == 0) {
                what = "a header line without a name: " + quote(a, 0, n) + " (expected name: value)";
            } else if (a[i] == SP || a[i] == HTAB) {
                what = "whitespace between the header name " + quote(a, 0, i) + " and its colon (expected name: value)";
            } else {
                what = "invalid byte " + describe(a[i]) + " in the header name " + quote(a, 0, i)
                        + " (expected a token: letters, digits and !#$%&'*+-.^_`|~)";
            }
            reject(out, 400, "bad-request", what);
            return;
        }
        int nameEnd = i++;
        while (i < n && (a[i] == SP || a[i] == HTAB)) {
            i++;
        }
        int vs = i;
        for (; i < n; i++) {
            if (!is(a[i], FIELD)) {
                reject(out, 400, "bad-request", "invalid byte " + describe(a[i]) + " in the value of header "
                        + lowerQuote(a, nameEnd) + " (expected visible characters, SP, HTAB or bytes 0x80-0xff)");
                return;
            }
        }
        int ve = n;
        while (ve > vs && (a[ve - 1] == SP || a[ve - 1] == HTAB)) {
            ve--;
        }
        if (trailer || fields == null) {
            return; // validated only: trailers are dropped, and so are an interim answer's fields
        }
        Http1Grammar.Name known = Http1Grammar.lookup(a, 0, nameEnd, h);
        String name = known != null ? known.name : unknownName(a, nameEnd, h);
        String value = null;
        if (vs == ve) {
            value = "";
        } else if (known != null) {
            value = known.value(a, vs, ve - vs);
        }
        if (value == null) {
            value = new String(a, vs, ve - vs, StandardCharsets.ISO_8859_1);
        }
        int id = known == null ? Http1Grammar.ID_OTHER : known.id;
        switch (id) {
            case Http1Grammar.ID_CONTENT_LENGTH -> contentLength(a, vs, ve);
            case Http1Grammar.ID_TRANSFER_ENCODING -> {
                transferEncodingFields++;
                if (!Http1Grammar.equalsLower(CHUNKED, a, vs, ve - vs)) {
                    transferEncodingOther = value;
                }
            }
            case Http1Grammar.ID_CONNECTION -> connectionTokens(a, vs, ve);
            default -> {
            }
        }
        if (keepField(id, value, a, vs, ve)) {
            fields.add(name, value);
        }
    }

    private String lowerQuote(byte[] a, int len) {
        byte[] l = new byte[Math.min(len, 64)];
        for (int i = 0; i < l.length; i++) {
            l[i] = LOWER[a[i] & 0xFF];
        }
        return quote(l, 0, l.length);
    }

    /** A lower-case String for a name {@link Http1Grammar} does not know; the last few are kept per connection. */
    private String unknownName(byte[] a, int len, int hash) {
        if (len > NAME_CACHE_MAX_LENGTH) {
            return lower(a, len);
        }
        if (nameCacheBytes == null) {
            nameCacheBytes = new byte[NAME_CACHE][];
            nameCacheNames = new String[NAME_CACHE];
        }
        int slot = hash & (NAME_CACHE - 1);
        byte[] cached = nameCacheBytes[slot];
        if (cached != null && Http1Grammar.equalsLower(cached, a, 0, len)) {
            return nameCacheNames[slot];
        }
        String s = lower(a, len);
        nameCacheBytes[slot] = s.getBytes(StandardCharsets.ISO_8859_1);
        nameCacheNames[slot] = s;
        return s;
    }

    private static String lower(byte[] a, int len) {
        for (int i = 0; i < len; i++) {
            a[i] = LOWER[a[i] & 0xFF]; // in place: the name's bytes are not read again
        }
        return new String(a, 0, len, StandardCharsets.ISO_8859_1);
    }

    private void contentLength(byte[] a, int s, int e) {
        contentLengthFields++;
        if (s == e) {
            contentLengthError = "an empty Content-Length (expected a decimal number of bytes)";
            return;
        }
        long v = 0;
        for (int i = s; i < e; i++) {
            byte b = a[i];
            if (!is(b, DIGIT)) {
                contentLengthError = "Content-Length " + quote(a, s, e)
                        + " is not a decimal number (expected digits only: no sign, no list)";
                return;
            }
            int d = b - '0';
            if (v > (Long.MAX_VALUE - d) / 10) {
                contentLengthError = "Content-Length " + quote(a, s, e) + " is too large (expected at most "
                        + Long.MAX_VALUE + ")";
                return;
            }
            v = v * 10 + d;
        }
        contentLength = v;
    }

    /** Looks for close and keep-alive in a Connection list (RFC 9110 §7.6.1: tokens, case-insensitive). */
    private void connectionTokens(byte[] a, int s, int e) {
        int i = s;
        while (i < e) {
            int comma = i;
            while (comma < e && a[comma] != ',') {
                comma++;
            }
            int ts = i;
            int te = comma;
            while (ts < te && (a[ts] == SP || a[ts] == HTAB)) {
                ts++;
            }
            while (te > ts && (a[te - 1] == SP || a[te - 1] == HTAB)) {
                te--;
            }
            if (Http1Grammar.equalsLower(CLOSE, a, ts, te - ts)) {
                connectionClose = true;
            } else if (Http1Grammar.equalsLower(KEEP_ALIVE, a, ts, te - ts)) {
                connectionKeepAlive = true;
            }
            i = comma + 1;
        }
    }

    /**
     * A chunk-size line (RFC 9112 §7.1): {@code 1*HEXDIG *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )}.
     * Extensions are validated and dropped: no receiver of Weft's uses them.
     */
    private void chunkSize(byte[] a, int n, List<Object> out) {
        int i = 0;
        long size = 0;
        while (i < n && is(a[i], HEX)) {
            size = (size << 4) | Character.digit(a[i], 16);
            i++;
        }
        if (i == 0) {
            reject(out, 400, "bad-request", "chunk size " + quote(a, 0, n)
                    + " is not a hexadecimal number (expected HEX digits, then optional ;extensions)");
            return;
        }
        if (i > HttpLimits.MAX_CHUNK_SIZE_DIGITS) {
            reject(out, 400, "bad-request", "a chunk size of " + i + " hex digits (expected at most "
                    + HttpLimits.MAX_CHUNK_SIZE_DIGITS + ")");
            return;
        }
        String bad = chunkExtensions(a, i, n);
        if (bad != null) {
            reject(out, 400, "bad-request", bad + " in the chunk-size line " + quote(a, 0, n)
                    + " (expected HEX digits, then optional ;name or ;name=value extensions)");
            return;
        }
        if (size == 0) {
            state = TRAILERS;
            headBytes = 0;
            fieldCount = 0;
        } else {
            remaining = size;
            state = CHUNK_DATA;
        }
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

    private void messageDone(List<Object> out) {
        out.add(Http1Messages.END);
        state = START;
        headBytes = 0;
        fieldCount = 0;
        fields = null;
    }

    // ---- for the subclasses

    /** Parses the start line {@code a[0, n)}, n > 0, and calls {@link #beginHead} or {@link #reject}. */
    abstract void startLine(byte[] a, int n, List<Object> out);

    /**
     * Called for each field the head keeps ({@code a[vs, ve)} is the value, without OWS); returns whether it goes
     * in the head's list. Framing and Connection were noted already.
     */
    abstract boolean keepField(int id, String value, byte[] a, int vs, int ve);

    /** The blank line after the fields: emits the head and calls one of the body methods, or rejects. */
    abstract void endOfHead(List<Object> out);

    /** The Rejected to emit for a rule that a request would be answered {@code status} and {@code kind} for. */
    Http1Messages.Rejected rejection(int status, String kind, String message) {
        return new Http1Messages.Rejected(status, kind, message);
    }

    /** Emits one Rejected; everything after it is discarded. */
    final void reject(List<Object> out, int status, String kind, String message) {
        out.add(rejection(status, kind, message));
        state = REJECTED;
        fields = null;
    }

    /** The start line was valid: reads fields next, kept in a list unless {@code keepFields} is false. */
    final void beginHead(boolean http10, boolean keepFields) {
        this.http10 = http10;
        fields = keepFields ? new WmpHeaders(8) : null;
        fieldCount = 0;
        contentLengthFields = 0;
        contentLength = -1;
        contentLengthError = null;
        transferEncodingFields = 0;
        transferEncodingOther = null;
        connectionClose = false;
        connectionKeepAlive = false;
        state = FIELDS;
    }

    /** An interim head (1xx) ended: its fields were validated; the next start line follows. */
    final void skipHead() {
        state = START;
        headBytes = 0;
        fieldCount = 0;
        fields = null;
    }

    final boolean http10() {
        return http10;
    }

    /** The head's field list (ownership passes to the head made of it). */
    final WmpHeaders fields() {
        return fields;
    }

    final boolean chunked() {
        return transferEncodingFields > 0;
    }

    /** The Content-Length, or -1 without one. */
    final long contentLength() {
        return contentLengthFields == 0 ? -1 : contentLength;
    }

    /** RFC 9112 §9.3: HTTP/1.1 persists unless Connection: close; HTTP/1.0 only with Connection: keep-alive. */
    final boolean keepAlive() {
        return !connectionClose && (!http10 || connectionKeepAlive);
    }

    /**
     * Rejects framing that can be read two ways (RFC 9112 §6.3, §11.2: request smuggling) or that Weft does not
     * decode; true when the framing is clear.
     */
    final boolean framingValid(List<Object> out) {
        if (contentLengthFields > 0 && transferEncodingFields > 0) {
            reject(out, 400, "conflicting-framing", "both Content-Length and Transfer-Encoding are present"
                    + " (expected one of them: a message with both can be read two ways, which is how requests are"
                    + " smuggled past a proxy)");
        } else if (transferEncodingFields > 0 && http10) {
            reject(out, 400, "bad-request", "Transfer-Encoding in an HTTP/1.0 message (expected Content-Length:"
                    + " HTTP/1.0 has no chunked coding)");
        } else if (contentLengthFields > 1) {
            reject(out, 400, "bad-request", contentLengthFields + " Content-Length fields (expected one)");
        } else if (contentLengthError != null) {
            reject(out, 400, "bad-request", contentLengthError);
        } else if (transferEncodingFields > 1) {
            reject(out, 501, "unsupported-transfer-coding", transferEncodingFields
                    + " Transfer-Encoding fields (expected exactly one: chunked)");
        } else if (transferEncodingOther != null) {
            reject(out, 501, "unsupported-transfer-coding", "Transfer-Encoding " + quote(transferEncodingOther)
                    + " is not supported (expected exactly: chunked)");
        } else {
            return true;
        }
        return false;
    }

    /** The head was emitted and has no body: END now. */
    final void noBody(List<Object> out) {
        messageDone(out);
    }

    /** The head was emitted; a body of {@code length} bytes follows (END at once when 0). */
    final void fixedBody(long length, List<Object> out) {
        if (length == 0) {
            messageDone(out);
        } else {
            remaining = length;
            state = FIXED;
        }
    }

    /** The head was emitted; a chunked body follows. */
    final void chunkedBody() {
        state = CHUNK_SIZE;
    }

    /** The head was emitted; the body is every byte until the connection closes (answers only). */
    final void bodyUntilClose() {
        remaining = Long.MAX_VALUE;
        state = UNTIL_CLOSE;
    }
}
