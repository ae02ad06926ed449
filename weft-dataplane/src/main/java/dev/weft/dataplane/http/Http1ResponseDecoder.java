package dev.weft.dataplane.http;

import java.util.List;

import static dev.weft.dataplane.http.Http1Grammar.DIGIT;
import static dev.weft.dataplane.http.Http1Grammar.FIELD;
import static dev.weft.dataplane.http.Http1Grammar.SP;
import static dev.weft.dataplane.http.Http1Grammar.describe;
import static dev.weft.dataplane.http.Http1Grammar.is;
import static dev.weft.dataplane.http.Http1Grammar.quote;

/**
 * Decodes the answers an app or a peer sends on a pooled client connection into {@link ResponseHead}, body ByteBufs
 * and {@link Http1Messages#END}, or one {@link Http1Messages.Rejected} (always 502 {@code app-protocol-error}, with
 * what was wrong in the message) after which the connection's input is discarded.
 *
 * <p>The connection must call {@link #expectHeadAnswer} once for every request it writes, before writing it: an
 * answer's body depends on the request (RFC 9112 §6.3: an answer to HEAD has none, whatever its head says), and
 * bytes that arrive while no request is outstanding are refused, since a server that answers twice would
 * otherwise have its second answer taken for the next request's.
 *
 * <p>Framing: 204, 304 and answers to HEAD have no body; otherwise a chunked or Content-Length body, or else the body
 * runs until the connection closes (END is emitted then, from {@link #decodeLast}, and the head says
 * {@code keepAlive() == false}). Interim answers (1xx) are validated and skipped; 101 is refused (Weft does not
 * switch protocols on a pooled connection). The rules on lines and fields are the request decoder's: no bare CR or
 * LF, no control bytes, no line folding, one Content-Length of digits, never with Transfer-Encoding, limits of
 * {@link HttpLimits}.
 *
 * <p>Thread: the pooled connection's event loop (calls to {@link #expectHeadAnswer} too); not thread safe.
 * Buffers: see {@link Http1Decoder}; the receiver releases each body ByteBuf.
 */
public final class Http1ResponseDecoder extends Http1Decoder {
    /** Requests outstanding, oldest first, as bits (1: a HEAD); more than this many in flight is a bug of the pool. */
    public static final int MAX_OUTSTANDING = 64;

    private long outstandingHead;
    private int outstanding;
    private int status;
    private boolean interim;

    /**
     * Tells the decoder a request is being written: its answer comes after those of the requests written before.
     *
     * @param head whether the request is a HEAD (its answer then has no body)
     * @throws IllegalStateException with {@link #MAX_OUTSTANDING} requests already outstanding
     */
    public void expectHeadAnswer(boolean head) {
        if (outstanding == MAX_OUTSTANDING) {
            throw new IllegalStateException(MAX_OUTSTANDING + " requests already wait for an answer on this"
                    + " connection (expected at most " + MAX_OUTSTANDING + " pipelined)");
        }
        if (head) {
            outstandingHead |= 1L << outstanding;
        }
        outstanding++;
    }

    /** Requests written whose answer has not started yet (an answer in progress no longer counts). */
    public int outstanding() {
        return outstanding;
    }

    @Override
    Http1Messages.Rejected rejection(int status, String kind, String message) {
        return new Http1Messages.Rejected(502, "app-protocol-error", message);
    }

    @Override
    void startLine(byte[] a, int n, List<Object> out) {
        if (outstanding == 0) {
            reject(out, 502, "app-protocol-error", "an answer " + quote(a, 0, n)
                    + " arrived while no request was outstanding (expected nothing until a request is sent)");
            return;
        }
        // HTTP/x.y SP 3DIGIT [SP reason]: RFC 9112 §4 makes the reason optional after the SP; some servers omit
        // the SP too, which changes no meaning.
        if (n < 12 || a[0] != 'H' || a[1] != 'T' || a[2] != 'T' || a[3] != 'P' || a[4] != '/'
                || !is(a[5], DIGIT) || a[6] != '.' || !is(a[7], DIGIT) || a[8] != SP
                || !is(a[9], DIGIT) || !is(a[10], DIGIT) || !is(a[11], DIGIT) || (n > 12 && a[12] != SP)) {
            reject(out, 502, "app-protocol-error", "malformed status line " + quote(a, 0, n)
                    + " (expected HTTP/1.1 SP 3-digit status SP reason)");
            return;
        }
        if (a[5] != '1' || (a[7] != '1' && a[7] != '0')) {
            reject(out, 502, "app-protocol-error", "HTTP version " + quote(a, 0, 8)
                    + " in an answer (expected HTTP/1.1 or HTTP/1.0)");
            return;
        }
        for (int i = 13; i < n; i++) {
            if (!is(a[i], FIELD)) {
                reject(out, 502, "app-protocol-error", "invalid byte " + describe(a[i])
                        + " in the reason phrase (expected visible characters, SP or HTAB)");
                return;
            }
        }
        status = (a[9] - '0') * 100 + (a[10] - '0') * 10 + (a[11] - '0');
        if (status < 100 || status > 599) {
            reject(out, 502, "app-protocol-error", "status " + status + " (expected 100..599)");
            return;
        }
        if (status == 101) {
            reject(out, 502, "app-protocol-error", "101 Switching Protocols (expected an HTTP/1.1 answer: Weft does"
                    + " not switch protocols on a proxied connection)");
            return;
        }
        interim = status < 200;
        // An interim answer's fields are validated only: no String is made for what is dropped.
        beginHead(a[7] == '0', !interim);
    }

    @Override
    boolean keepField(int id, String value, byte[] a, int vs, int ve) {
        return true;
    }

    @Override
    void endOfHead(List<Object> out) {
        if (interim) {
            skipHead(); // the final answer to the same request comes next
            return;
        }
        if (!framingValid(out)) {
            return;
        }
        boolean toHead = (outstandingHead & 1) != 0;
        outstandingHead >>>= 1;
        outstanding--;
        ResponseHead head = new ResponseHead(status, fields());
        if (toHead || status == 204 || status == 304) {
            out.add(head.keepAlive(keepAlive()));
            noBody(out);
        } else if (chunked()) {
            out.add(head.keepAlive(keepAlive()));
            chunkedBody();
        } else if (contentLength() >= 0) {
            out.add(head.keepAlive(keepAlive()));
            fixedBody(contentLength(), out);
        } else {
            out.add(head.keepAlive(false)); // the close ends the body: this connection carries nothing more
            bodyUntilClose();
        }
    }
}
