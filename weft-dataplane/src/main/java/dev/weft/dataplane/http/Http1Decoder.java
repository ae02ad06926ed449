package dev.weft.dataplane.http;

import dev.weft.protocol.StringCache;
import dev.weft.protocol.WmpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What the request and answer decoders share: the state machine of one connection's messages, head after head. It
 * reads the lines of each head ({@link Http1LineReader}), gives the start line to the subclass and the field lines to
 * {@link Http1FieldParser}, and once the subclass has said how the body is framed, hands the bytes to
 * {@link Http1BodyFramer} until the body is complete. The subclasses parse their start line and decide, at the end of
 * the head, what the message is and how its body is framed ({@link Http1RequestDecoder},
 * {@link Http1ResponseDecoder}); see {@link Http1Messages} for what they emit.
 *
 * <p>Why a ByteToMessageDecoder: its cumulation is the read buffer itself whenever nothing is left over from the
 * previous read, so the body slices this passes on are views of the socket's buffer (no copy); bytes are copied only
 * when a line or a chunk-size was split across reads. Each complete line is copied once into a scratch array and
 * parsed there with table lookups (no per-line String, no per-byte bounds check of a ByteBuf); a header value costs
 * one String unless it is a common one ({@link Http1Grammar}) or one the connection sent recently
 * ({@link StringCache}). The three helpers are final classes made once per
 * connection: no allocation per request, and no virtual call in their scanning loops.
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
    private static final int BODY = 2;
    private static final int REJECTED = 3;
    private static final int CLOSED = 4;

    static final String BARE_LF_MESSAGE = "a bare LF ends a line (expected CRLF at the end of every line)";

    /** Names, values and paths the connection sent before cost no new String (bounded; see StringCache). */
    final StringCache strings = new StringCache(StandardCharsets.ISO_8859_1);
    private final Http1LineReader lines = new Http1LineReader();
    private final Http1FieldParser head = new Http1FieldParser(this);
    private final Http1BodyFramer body = new Http1BodyFramer(lines, head);
    private int state = START;
    /** Bytes of the current head so far, CRLFs included. */
    private int headBytes;

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        for (;;) {
            switch (state) {
                case START -> {
                    int n = lines.read(in, Math.min(HttpLimits.MAX_INITIAL_LINE,
                            HttpLimits.MAX_HEADER_BYTES - headBytes - 2));
                    if (n == Http1LineReader.INCOMPLETE) {
                        return;
                    }
                    if (n < 0) {
                        lineRefused(n, out);
                    } else if (n == 0) {
                        // RFC 9112 §2.2: a CRLF before a start line (after a body, from old clients) is skipped.
                        headBytes += 2;
                    } else {
                        headBytes += n + 2;
                        startLine(lines.line(), n, out);
                    }
                }
                case FIELDS -> {
                    int n = lines.read(in, HttpLimits.MAX_HEADER_BYTES - headBytes - 2);
                    if (n == Http1LineReader.INCOMPLETE) {
                        return;
                    }
                    if (n < 0) {
                        lineRefused(n, out);
                    } else {
                        headBytes += n + 2;
                        if (n == 0) {
                            endOfHead(out);
                        } else {
                            Http1Messages.Rejected r = head.field(lines.line(), n, false);
                            if (r != null) {
                                reject(out, r);
                            }
                        }
                    }
                }
                case BODY -> {
                    int r = body.decode(in, out);
                    if (r == Http1BodyFramer.MORE) {
                        return;
                    }
                    if (r == Http1BodyFramer.DONE) {
                        messageDone(out);
                    } else {
                        reject(out, body.problem());
                    }
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
        switch (state) {
            case REJECTED, CLOSED -> {
                return;
            }
            case START -> {
                if (in.isReadable()) {
                    reject(out, 400, "bad-request", "the connection closed in the middle of a start line");
                }
            }
            case FIELDS -> reject(out, 400, "bad-request", "the connection closed in the middle of a head");
            default -> { // BODY
                Http1Messages.Rejected r = body.cutShort();
                if (r == null) {
                    out.add(Http1Messages.END);
                } else {
                    reject(out, r);
                }
            }
        }
        state = CLOSED;
        in.skipBytes(in.readableBytes());
    }

    /** A start or field line the line reader refused ({@code code} is TOO_LONG or BARE_LF). */
    private void lineRefused(int code, List<Object> out) {
        if (code == Http1LineReader.BARE_LF) {
            reject(out, 400, "bad-request", BARE_LF_MESSAGE);
        } else if (state == START && HttpLimits.MAX_HEADER_BYTES - headBytes - 2 >= HttpLimits.MAX_INITIAL_LINE) {
            reject(out, 414, "uri-too-long", "the start line is longer than " + HttpLimits.MAX_INITIAL_LINE
                    + " bytes (expected at most " + HttpLimits.MAX_INITIAL_LINE + ")");
        } else {
            reject(out, 431, "headers-too-large", "the head is larger than " + HttpLimits.MAX_HEADER_BYTES
                    + " bytes (expected at most " + HttpLimits.MAX_HEADER_BYTES + ", start line and fields together)");
        }
    }

    private void messageDone(List<Object> out) {
        out.add(Http1Messages.END);
        state = START;
        headBytes = 0;
        head.clear();
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
        head.clear();
    }

    private void reject(List<Object> out, Http1Messages.Rejected r) {
        reject(out, r.status(), r.kind(), r.message());
    }

    /**
     * Emits one Rejected outside a read (from a timer: the input broke no rule, it stopped coming) and passes the
     * end of that "read" on; everything after it is discarded.
     */
    final void rejectNow(ChannelHandlerContext ctx, int status, String kind, String message) {
        Http1Messages.Rejected r = rejection(status, kind, message);
        state = REJECTED;
        head.clear();
        ctx.fireChannelRead(r);
        ctx.fireChannelReadComplete();
    }

    /**
     * A head has begun and is not complete: part of a start line is here (blank lines before one do not count), or
     * the start line was and the blank line after the fields was not yet.
     */
    final boolean headInProgress() {
        return state == FIELDS || (state == START && internalBuffer().isReadable());
    }

    /** The start line was valid: reads fields next, kept in a list unless {@code keepFields} is false. */
    final void beginHead(boolean http10, boolean keepFields) {
        head.beginHead(http10, keepFields);
        state = FIELDS;
    }

    /** An interim head (1xx) ended: its fields were validated; the next start line follows. */
    final void skipHead() {
        state = START;
        headBytes = 0;
        head.clear();
    }

    final boolean http10() {
        return head.http10();
    }

    /** The head's field list (ownership passes to the head made of it). */
    final WmpHeaders fields() {
        return head.fields();
    }

    final boolean chunked() {
        return head.chunked();
    }

    /** The Content-Length, or -1 without one. */
    final long contentLength() {
        return head.contentLength();
    }

    /** RFC 9112 §9.3: HTTP/1.1 persists unless Connection: close; HTTP/1.0 only with Connection: keep-alive. */
    final boolean keepAlive() {
        return head.keepAlive();
    }

    /**
     * Rejects framing that can be read two ways (RFC 9112 §6.3, §11.2: request smuggling) or that Weft does not
     * decode; true when the framing is clear.
     */
    final boolean framingValid(List<Object> out) {
        Http1Messages.Rejected r = head.framingProblem();
        if (r == null) {
            return true;
        }
        reject(out, r);
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
            body.fixed(length);
            state = BODY;
        }
    }

    /** The head was emitted; a chunked body follows. */
    final void chunkedBody() {
        body.chunked();
        state = BODY;
    }

    /** The head was emitted; the body is every byte until the connection closes (answers only). */
    final void bodyUntilClose() {
        body.untilClose();
        state = BODY;
    }
}
