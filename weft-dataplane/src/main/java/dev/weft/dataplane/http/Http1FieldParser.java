package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;

import static dev.weft.dataplane.http.Http1Grammar.DIGIT;
import static dev.weft.dataplane.http.Http1Grammar.FIELD;
import static dev.weft.dataplane.http.Http1Grammar.HTAB;
import static dev.weft.dataplane.http.Http1Grammar.LOWER;
import static dev.weft.dataplane.http.Http1Grammar.SP;
import static dev.weft.dataplane.http.Http1Grammar.TCHAR;
import static dev.weft.dataplane.http.Http1Grammar.describe;
import static dev.weft.dataplane.http.Http1Grammar.is;
import static dev.weft.dataplane.http.Http1Grammar.quote;

/**
 * The field lines of a head, and of a chunked body's trailer section: validates each line (RFC 9110 §5: a token name,
 * a colon, a value of field bytes; no line folding; at most {@link HttpLimits#MAX_HEADER_FIELDS}), builds the head's
 * field list (names lower case; a common name or value costs no new String, see {@link Http1Grammar}), and notes
 * what the framing and Connection fields said so that {@link #framingProblem} can refuse a head that can be read two
 * ways. Each broken rule is returned as the {@link Http1Messages.Rejected} to emit; the decoder emits it (after
 * {@link Http1Decoder#rejection} has made it the answer its side gives).
 *
 * <p>One per decoder, reset by {@link #beginHead} for each head: nothing is allocated per request but the Strings of
 * names and values new to the connection, and a field list when the previous head's has not come back yet (its
 * exchange recycles it when it is over; a pipelined head can come first). Names and values {@link Http1Grammar} does not know
 * come from the decoder's {@link dev.weft.protocol.StringCache}: a client sends the same Host, custom names and most
 * values on each request, and those then cost no String.
 *
 * <p>Thread: its decoder's, the connection's event loop; not thread safe. Buffers: none; it parses the line reader's
 * scratch array. The field list it builds passes to the head made of it ({@link #fields}).
 */
final class Http1FieldParser {
    private static final byte[] CHUNKED = {'c', 'h', 'u', 'n', 'k', 'e', 'd'};
    private static final byte[] CLOSE = {'c', 'l', 'o', 's', 'e'};
    private static final byte[] KEEP_ALIVE = {'k', 'e', 'e', 'p', '-', 'a', 'l', 'i', 'v', 'e'};

    /** Asked, for each field a head keeps, whether it goes in the list (and told what it is). */
    private final Http1Decoder decoder;
    /** The field lists of this connection's heads whose exchanges are over, for the next heads. */
    private final WmpHeaders.Spares spares = new WmpHeaders.Spares(2);
    private int fieldCount;

    // What the current head's fields said; reset by beginHead.
    /** The head's fields, or null when they are validated only (an interim answer, or none being read). */
    private WmpHeaders fields;
    private boolean http10;
    private int contentLengthFields;
    private long contentLength;
    private String contentLengthError;
    private int transferEncodingFields;
    private String transferEncodingOther;
    private boolean connectionClose;
    private boolean connectionKeepAlive;

    Http1FieldParser(Http1Decoder decoder) {
        this.decoder = decoder;
    }

    /** A start line was valid: its fields come next, kept in a list unless {@code keepFields} is false. */
    void beginHead(boolean http10, boolean keepFields) {
        this.http10 = http10;
        fields = keepFields ? spares.take(8) : null;
        fieldCount = 0;
        contentLengthFields = 0;
        contentLength = -1;
        contentLengthError = null;
        transferEncodingFields = 0;
        transferEncodingOther = null;
        connectionClose = false;
        connectionKeepAlive = false;
    }

    /** A chunked body's trailer section starts: its fields are counted afresh (and validated only). */
    void beginTrailers() {
        fieldCount = 0;
    }

    /** The head was emitted, skipped or refused: the list is no longer this parser's. */
    void clear() {
        fieldCount = 0;
        fields = null;
    }

    /** One header or trailer line, {@code a[0, n)} with n > 0; null when it is valid, else the rule it broke. */
    Http1Messages.Rejected field(byte[] a, int n, boolean trailer) {
        if (a[0] == SP || a[0] == HTAB) {
            return bad("a header line starts with whitespace: line folding (obs-fold) is not accepted (expected each"
                    + " field as name: value on one line)");
        }
        if (++fieldCount > HttpLimits.MAX_HEADER_FIELDS) {
            return new Http1Messages.Rejected(431, "headers-too-large", "more than " + HttpLimits.MAX_HEADER_FIELDS
                    + " header fields" + (trailer ? " in the trailer section" : "") + " (expected at most "
                    + HttpLimits.MAX_HEADER_FIELDS + ")");
        }
        int h = 0;
        int i = 0;
        while (i < n && is(a[i], TCHAR)) {
            h = Http1Grammar.hashStep(h, a[i]);
            i++;
        }
        if (i == n || a[i] != ':' || i == 0) {
            if (i == n) {
                return bad("a header line without a colon: " + quote(a, 0, n) + " (expected name: value)");
            } else if (i == 0) {
                return bad("a header line without a name: " + quote(a, 0, n) + " (expected name: value)");
            } else if (a[i] == SP || a[i] == HTAB) {
                return bad("whitespace between the header name " + quote(a, 0, i) + " and its colon (expected name:"
                        + " value)");
            }
            return bad("invalid byte " + describe(a[i]) + " in the header name " + quote(a, 0, i)
                    + " (expected a token: letters, digits and !#$%&'*+-.^_`|~)");
        }
        int nameEnd = i++;
        while (i < n && (a[i] == SP || a[i] == HTAB)) {
            i++;
        }
        int vs = i;
        for (; i < n; i++) {
            if (!is(a[i], FIELD)) {
                return bad("invalid byte " + describe(a[i]) + " in the value of header " + lowerQuote(a, nameEnd)
                        + " (expected visible characters, SP, HTAB or bytes 0x80-0xff)");
            }
        }
        int ve = n;
        while (ve > vs && (a[ve - 1] == SP || a[ve - 1] == HTAB)) {
            ve--;
        }
        if (trailer || fields == null) {
            return null; // validated only: trailers are dropped, and so are an interim answer's fields
        }
        Http1Grammar.Name known = Http1Grammar.lookup(a, 0, nameEnd, h);
        String name = known != null ? known.name : unknownName(a, nameEnd);
        String value = null;
        if (vs == ve) {
            value = "";
        } else if (known != null) {
            value = known.value(a, vs, ve - vs);
        }
        if (value == null) {
            value = decoder.strings.get(a, vs, ve - vs);
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
        if (decoder.keepField(id, value, a, vs, ve)) {
            fields.add(name, value);
        }
        return null;
    }

    private static Http1Messages.Rejected bad(String message) {
        return new Http1Messages.Rejected(400, "bad-request", message);
    }

    private static String lowerQuote(byte[] a, int len) {
        byte[] l = new byte[Math.min(len, 64)];
        for (int i = 0; i < l.length; i++) {
            l[i] = LOWER[a[i] & 0xFF];
        }
        return quote(l, 0, l.length);
    }

    /** A lower-case String for a name {@link Http1Grammar} does not know (a client sends the same ones each time). */
    private String unknownName(byte[] a, int len) {
        for (int i = 0; i < len; i++) {
            a[i] = LOWER[a[i] & 0xFF]; // in place: the name's bytes are not read again
        }
        return decoder.strings.get(a, 0, len);
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

    // ---- what the head said

    boolean http10() {
        return http10;
    }

    /** The head's field list (ownership passes to the head made of it). */
    WmpHeaders fields() {
        return fields;
    }

    boolean chunked() {
        return transferEncodingFields > 0;
    }

    /** The Content-Length, or -1 without one. */
    long contentLength() {
        return contentLengthFields == 0 ? -1 : contentLength;
    }

    /** RFC 9112 §9.3: HTTP/1.1 persists unless Connection: close; HTTP/1.0 only with Connection: keep-alive. */
    boolean keepAlive() {
        return !connectionClose && (!http10 || connectionKeepAlive);
    }

    /**
     * Null when the framing is clear; else the rule broken by framing that can be read two ways (RFC 9112 §6.3,
     * §11.2: request smuggling) or that Weft does not decode.
     */
    Http1Messages.Rejected framingProblem() {
        if (contentLengthFields > 0 && transferEncodingFields > 0) {
            return new Http1Messages.Rejected(400, "conflicting-framing", "both Content-Length and Transfer-Encoding"
                    + " are present (expected one of them: a message with both can be read two ways, which is how"
                    + " requests are smuggled past a proxy)");
        } else if (transferEncodingFields > 0 && http10) {
            return bad("Transfer-Encoding in an HTTP/1.0 message (expected Content-Length: HTTP/1.0 has no chunked"
                    + " coding)");
        } else if (contentLengthFields > 1) {
            return bad(contentLengthFields + " Content-Length fields (expected one)");
        } else if (contentLengthError != null) {
            return bad(contentLengthError);
        } else if (transferEncodingFields > 1) {
            return new Http1Messages.Rejected(501, "unsupported-transfer-coding", transferEncodingFields
                    + " Transfer-Encoding fields (expected exactly one: chunked)");
        } else if (transferEncodingOther != null) {
            return new Http1Messages.Rejected(501, "unsupported-transfer-coding", "Transfer-Encoding "
                    + quote(transferEncodingOther) + " is not supported (expected exactly: chunked)");
        }
        return null;
    }
}
