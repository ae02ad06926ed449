package dev.weft.dataplane.http;

import dev.weft.registry.support.Durations;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.weft.dataplane.http.Http1Grammar.DIGIT;
import static dev.weft.dataplane.http.Http1Grammar.SP;
import static dev.weft.dataplane.http.Http1Grammar.TCHAR;
import static dev.weft.dataplane.http.Http1Grammar.VCHAR;
import static dev.weft.dataplane.http.Http1Grammar.describe;
import static dev.weft.dataplane.http.Http1Grammar.is;
import static dev.weft.dataplane.http.Http1Grammar.quote;

/**
 * Decodes the requests a client sends a listener into {@link RequestHead}, body ByteBufs and
 * {@link Http1Messages#END}, request after request (pipelined requests included), or one
 * {@link Http1Messages.Rejected} for the first rule broken, after which the connection's input is discarded.
 *
 * <p>Strict where a proxy must be (RFC 9112 §11.2: a proxy that reads a request differently from the server behind
 * it lets requests be smuggled past it): exactly one SP between the parts of the request line; only HTTP/1.1 and
 * HTTP/1.0; origin-form targets (an absolute-form target only when it names the Host, and then made origin form;
 * {@code *} only for OPTIONS; no CONNECT); one valid Host on HTTP/1.1; no line folding, bare CR or bare LF; one
 * Content-Length of digits or one {@code Transfer-Encoding: chunked}, never both; {@code Expect: 100-continue} or no
 * Expect. Limits: {@link HttpLimits#MAX_INITIAL_LINE} (414), {@link HttpLimits#MAX_HEADER_BYTES} and
 * {@link HttpLimits#MAX_HEADER_FIELDS} (431). Each Rejected says what was wrong and what was expected.
 *
 * <p>Host becomes {@link RequestHead#authority()} and leaves the fields; everything else, framing and Connection
 * included, stays in {@link RequestHead#fields()} as received (names lower case) for the forwarding rules
 * ({@link ProxyHeaders}) to filter. The connection closing in the middle of a request emits a Rejected too (400), so
 * that a body cut short is never mistaken for a whole one.
 *
 * <p>Request-head timeout (otherwise a client sending its head a byte at a time holds a connection forever): once a
 * head's first byte is here, the whole head must be within the timeout, or one Rejected 408 {@code request-timeout}
 * is emitted, and the connection is answered and closed like any other rejection. Only a head still incomplete at the
 * end of a read costs anything: its clock starts at the end of the read that brought its first byte, and one check is
 * scheduled on the connection's event loop for its start plus the timeout. A head that arrives whole in one read, the
 * usual case, costs an int increment: no clock read, no task, no allocation. A check that finds its head complete
 * does nothing, or waits on for the head begun since; one that finds reading paused by this side (AUTO_READ off while
 * an earlier request is answered) starts the head's clock again, since the missing bytes may be in the socket unread.
 * An idle keep-alive connection between requests has no head in progress and is not timed here: the downstream's
 * idle timeout ({@code --idle-timeout}) is for that, and leaves a head in progress to this one ({@link #readingHead}).
 *
 * <p>Thread: the listener connection's Worker event loop, the timer's check included; not thread safe. Buffers:
 * see {@link Http1Decoder}; the receiver releases each body ByteBuf.
 */
public final class Http1RequestDecoder extends Http1Decoder {
    /** What {@code weft sidecar --request-head-timeout} defaults to. */
    public static final Duration DEFAULT_HEAD_TIMEOUT = Duration.ofSeconds(10);

    private static final byte[] CONTINUE = "100-continue".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HTTP_SCHEME = "http://".getBytes(StandardCharsets.US_ASCII);

    private String method;
    private String path;
    /** The authority of an absolute-form target, which must equal Host; null for origin form. */
    private String targetAuthority;
    private int hostFields;
    private String host;
    private boolean hostValid;
    private boolean expectContinue;
    private String expectOther;

    private final Duration headTimeout;
    /** The timeout in nanoseconds; 0: no timeout. */
    private final long headTimeoutNanos;
    private final Runnable checkHead = this::checkHead;
    /** Heads complete so far (the blank line after the fields read): the number of the head in progress. */
    private int heads;
    /** The head being timed (its number), and when it started by the event loop's clock. */
    private int timedHead = -1;
    private long timedHeadStart;
    /** The check scheduled for the head in progress; null when none is. */
    private ScheduledFuture<?> headCheck;
    private ChannelHandlerContext ctx;

    /** A decoder with the {@link #DEFAULT_HEAD_TIMEOUT}. */
    public Http1RequestDecoder() {
        this(DEFAULT_HEAD_TIMEOUT);
    }

    /** @param headTimeout longest a request head may take from its first byte to its end; zero for no limit */
    public Http1RequestDecoder(Duration headTimeout) {
        if (headTimeout.isNegative()) {
            throw new IllegalArgumentException("request head timeout " + headTimeout
                    + " is negative (expected a duration, or 0 for no limit)");
        }
        this.headTimeout = headTimeout;
        this.headTimeoutNanos = headTimeout.toNanos();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (headTimeoutNanos > 0 && headInProgress()) {
            long now = ctx.executor().ticker().nanoTime();
            if (timedHead != heads) {
                timedHead = heads;
                timedHeadStart = now;
            }
            if (headCheck == null) {
                this.ctx = ctx;
                headCheck = ctx.executor().schedule(checkHead, timedHeadStart + headTimeoutNanos - now,
                        TimeUnit.NANOSECONDS);
            }
        }
        super.channelReadComplete(ctx);
    }

    /** The scheduled check: 408 if the head it was scheduled for is still in progress after the timeout. */
    private void checkHead() {
        headCheck = null;
        if (!ctx.channel().isActive() || !headInProgress()) {
            return; // the head completed (or was refused, or the connection closed): nothing to time now
        }
        long now = ctx.executor().ticker().nanoTime();
        if (timedHead != heads || !ctx.channel().config().isAutoRead()) {
            // Another head, not yet seen at the end of a read; or reading is paused by this side, so the missing
            // bytes may be in the socket unread: the client is not the slow one, and the clock starts now.
            timedHead = heads;
            timedHeadStart = now;
        }
        long left = timedHeadStart + headTimeoutNanos - now;
        if (left > 0) {
            headCheck = ctx.executor().schedule(checkHead, left, TimeUnit.NANOSECONDS);
            return;
        }
        rejectNow(ctx, 408, "request-timeout", "the request head was not complete " + Durations.format(headTimeout)
                + " after its first byte arrived (expected the whole head within " + Durations.format(headTimeout)
                + ": the limit weft sidecar --request-head-timeout sets)");
    }

    /**
     * Whether a request head has begun and is not complete: then this decoder's head timeout governs the connection,
     * not the downstream's idle timeout.
     */
    public boolean readingHead() {
        return headInProgress();
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (headCheck != null) {
            headCheck.cancel(false); // the connection closed: the check must not keep it reachable until it fires
            headCheck = null;
        }
    }

    @Override
    void startLine(byte[] a, int n, List<Object> out) {
        int i = 0;
        while (i < n && is(a[i], TCHAR)) {
            i++;
        }
        int methodEnd = i;
        if (methodEnd == 0 || i == n || a[i] != SP) {
            reject(out, 400, "bad-request", methodEnd == 0 || i == n
                    ? "malformed request line " + quote(a, 0, n) + " (expected METHOD SP target SP HTTP/1.1)"
                    : "invalid byte " + describe(a[i]) + " in the method " + quote(a, 0, i)
                    + " (expected a token, then one SP)");
            return;
        }
        int ts = ++i;
        while (i < n && is(a[i], VCHAR)) {
            i++;
        }
        int te = i;
        if (te == ts || i == n || a[i] != SP) {
            String what;
            if (te == ts) {
                what = "an empty target, or more than one SP after the method, in " + quote(a, 0, n)
                        + " (expected METHOD SP target SP HTTP/1.1)";
            } else if (i == n) {
                what = "a request line without an HTTP version: " + quote(a, 0, n)
                        + " (expected METHOD SP target SP HTTP/1.1; HTTP/0.9 is not accepted)";
            } else if ((a[i] & 0x80) != 0) {
                what = "a byte " + describe(a[i]) + " in the target (expected ASCII: percent-encode other bytes)";
            } else {
                what = "invalid byte " + describe(a[i]) + " in the target (expected visible ASCII)";
            }
            reject(out, 400, "bad-request", what);
            return;
        }
        int vs = i + 1;
        if (n - vs != 8 || a[vs] != 'H' || a[vs + 1] != 'T' || a[vs + 2] != 'T' || a[vs + 3] != 'P'
                || a[vs + 4] != '/' || !is(a[vs + 5], DIGIT) || a[vs + 6] != '.' || !is(a[vs + 7], DIGIT)) {
            reject(out, 400, "bad-request", "malformed HTTP version " + quote(a, vs, n)
                    + " (expected HTTP/1.1 or HTTP/1.0 after exactly one SP)");
            return;
        }
        int major = a[vs + 5] - '0';
        int minor = a[vs + 7] - '0';
        if (major == 2 && minor == 0 && methodEnd == 3 && a[0] == 'P' && a[1] == 'R' && a[2] == 'I'
                && te - ts == 1 && a[ts] == '*') {
            reject(out, 400, "bad-request", "HTTP/2 with prior knowledge (the PRI * HTTP/2.0 preface) is not"
                    + " accepted on this listener (expected HTTP/1.1 or HTTP/1.0)");
            return;
        }
        if (major != 1 || minor > 1) {
            reject(out, 505, "http-version-not-supported", "HTTP version " + quote(a, vs, n)
                    + " is not supported (expected HTTP/1.1 or HTTP/1.0)");
            return;
        }
        method = Http1Grammar.method(a, methodEnd);
        if (!target(a, ts, te, out)) {
            return;
        }
        hostFields = 0;
        host = null;
        hostValid = false;
        expectContinue = false;
        expectOther = null;
        beginHead(minor == 0, true);
    }

    /** Sets {@link #path} (and {@link #targetAuthority}) from the target {@code a[ts, te)}; false if rejected. */
    private boolean target(byte[] a, int ts, int te, List<Object> out) {
        targetAuthority = null;
        if (method == Http1Grammar.CONNECT) {
            reject(out, 400, "bad-request", "CONNECT (an authority-form target) is not supported on this listener"
                    + " (expected a request for a path, such as GET /path)");
            return false;
        }
        if (a[ts] == '/') {
            path = te - ts == 1 ? "/" : strings.get(a, ts, te - ts);
            return true;
        }
        if (te - ts == 1 && a[ts] == '*') {
            if (method != Http1Grammar.OPTIONS) {
                reject(out, 400, "bad-request", "the target * with " + quote(method)
                        + " (expected * only with OPTIONS)");
                return false;
            }
            path = "*";
            return true;
        }
        if (te - ts > HTTP_SCHEME.length && Http1Grammar.equalsLower(HTTP_SCHEME, a, ts, HTTP_SCHEME.length)) {
            // Absolute form (RFC 9112 §3.2.2): kept only when it names the same authority as Host (checked at the
            // end of the head), so that the target and Host can never route a request two ways.
            int as = ts + HTTP_SCHEME.length;
            int ae = as;
            while (ae < te && a[ae] != '/' && a[ae] != '?') {
                ae++;
            }
            if (!Http1Grammar.validHost(a, as, ae)) {
                reject(out, 400, "bad-request", "the absolute-form target's authority " + quote(a, as, ae)
                        + " is not a valid host[:port] (expected http://host[:port]/path, without user info)");
                return false;
            }
            targetAuthority = new String(a, as, ae - as, StandardCharsets.ISO_8859_1);
            if (ae == te) {
                path = "/";
            } else if (a[ae] == '?') {
                path = "/" + new String(a, ae, te - ae, StandardCharsets.ISO_8859_1);
            } else {
                path = new String(a, ae, te - ae, StandardCharsets.ISO_8859_1);
            }
            return true;
        }
        reject(out, 400, "bad-request", "the target " + quote(a, ts, te) + " is not origin form (expected /path?query,"
                + " http://host/path naming the Host, or * with OPTIONS)");
        return false;
    }

    @Override
    boolean keepField(int id, String value, byte[] a, int vs, int ve) {
        if (id == Http1Grammar.ID_HOST) {
            hostFields++;
            host = value;
            hostValid = Http1Grammar.validHost(a, vs, ve);
            return false; // travels as the authority
        }
        if (id == Http1Grammar.ID_EXPECT) {
            if (Http1Grammar.equalsLower(CONTINUE, a, vs, ve - vs)) {
                expectContinue = true;
            } else {
                expectOther = value;
            }
        }
        return true;
    }

    @Override
    void endOfHead(List<Object> out) {
        heads++; // complete, whatever it says: the head timeout is over for it
        // Framing first: a request that could be read two ways is refused as such, whatever else is wrong with it.
        if (!framingValid(out)) {
            return;
        }
        if (hostFields > 1) {
            reject(out, 400, "bad-request", hostFields + " Host fields (expected exactly one)");
            return;
        }
        if (hostFields == 0 && !http10()) {
            reject(out, 400, "bad-request", "no Host field (expected exactly one in an HTTP/1.1 request)");
            return;
        }
        if (host != null && !hostValid) {
            reject(out, 400, "bad-request", "Host " + quote(host) + " is not a valid host[:port] (expected a name of"
                    + " letters, digits and -._~, an IPv4 address or an [IPv6] address, then an optional :port"
                    + " up to 65535)");
            return;
        }
        if (targetAuthority != null && !targetAuthority.equalsIgnoreCase(host)) {
            reject(out, 400, "bad-request", "the absolute-form target names " + quote(targetAuthority) + " but Host is "
                    + (host == null ? "missing" : quote(host)) + " (expected the same host[:port] in both, or an"
                    + " origin-form target /path)");
            return;
        }
        if (expectOther != null) {
            reject(out, 417, "expectation-failed", "Expect " + quote(expectOther)
                    + " is not supported (expected 100-continue, or no Expect)");
            return;
        }
        // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
        RequestHead head = new RequestHead(method, host, path, fields())
                .keepAlive(keepAlive())
                .expectContinue(expectContinue && !http10());
        out.add(head);
        if (chunked()) {
            chunkedBody();
        } else if (contentLength() > 0) {
            fixedBody(contentLength(), out);
        } else {
            noBody(out);
        }
    }
}
