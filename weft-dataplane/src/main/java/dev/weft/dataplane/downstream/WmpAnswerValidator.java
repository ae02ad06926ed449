package dev.weft.dataplane.downstream;

import dev.weft.dataplane.downstream.WmpBoundary.FieldReasons;
import dev.weft.dataplane.downstream.WmpBoundary.Refusal;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpResponse;

/**
 * The consumer side's boundary from WMP to the client: every answer a peer sidecar sends (its RESPONSE, then its DATA)
 * is checked here before any of it becomes HTTP/1.1 for the client. The client's connection carries its next answers
 * after this one, so an answer that named its own framing, or whose body disagreed with its length, would make the
 * client read the rest of the connection wrongly; a CR LF in a field would write header lines of the peer's own.
 * The same allow-list as the provider side's ({@link WmpBoundary}): each name a lower-case token, each value
 * field-content, no hop-by-hop name, at most one {@code content-length} that the body matches. Besides, the status is
 * a final one, 200 to 599: a RESPONSE is the whole answer to its stream, while HTTP/1.1's interim answers stay on the
 * app's hop (the provider side's decoder skips them; the consumer side answers {@code Expect: 100-continue} itself),
 * and a 101 would hand the client's connection to another protocol. An answer HTTP/1.1 gives no body (to a HEAD, a
 * 204, a 304) may declare the length of the body it would have had; bytes sent with it are dropped ({@link #bodiless}).
 *
 * <p>A refused answer resets its stream ({@code CANCEL PROTOCOL_ERROR}; the connection and its other streams carry
 * on), is counted in {@code weft_rejected_total{boundary="wmp_answer"}}, and becomes {@link #error}: a 502
 * {@code upstream-protocol-error} when nothing of the answer reached the client yet, else the client's connection is
 * closed, the only way HTTP/1.1 has to say an answer broke off.
 *
 * <p>Thread: the checks are pure functions and run anywhere; {@link #refuse} runs on the mesh connection's Worker
 * loop. Buffers: {@link #refuse} releases the frame it refuses; the checks touch none.
 */
public final class WmpAnswerValidator {
    private static final System.Logger LOG = System.getLogger(WmpAnswerValidator.class.getName());
    private static final FieldReasons FIELDS = new FieldReasons(Reason.ANSWER_BAD_FIELD_NAME,
            Reason.ANSWER_BAD_FIELD_VALUE, Reason.ANSWER_FRAMING_FIELD, Reason.ANSWER_BAD_CONTENT_LENGTH);
    /** The {@code x-weft-error} kind of a refused answer: the peer sidecar's hop broke its protocol. */
    public static final String KIND = "upstream-protocol-error";

    private WmpAnswerValidator() {}

    /**
     * Null when {@code r} may be written to the client; else why not. Allocates only to describe a refusal.
     *
     * @param toHead whether the request was a HEAD (its answer has no body, whatever its content-length says)
     */
    public static Refusal check(WmpResponse r, boolean toHead) {
        int status = r.status();
        if (status < 200 || status > 599) {
            return new Refusal(Reason.ANSWER_BAD_STATUS, "status " + status + " (expected a final status, 200..599:"
                    + " interim answers stay on the app's hop)");
        }
        Refusal bad = WmpBoundary.checkFields(r.headers(), FIELDS, false);
        if (bad != null || bodiless(status, toHead)) {
            return bad;
        }
        long declared = WmpBoundary.contentLength(r.headers());
        return declared < 0 ? null : WmpBoundary.checkFirstBody(declared, r.body().readableBytes(), r.endStream(),
                Reason.ANSWER_BAD_CONTENT_LENGTH, "RESPONSE");
    }

    /**
     * The body bytes an answer {@link #check} accepted must still carry after its RESPONSE frame, or -1 when it
     * declared no content-length (or has no body at all: see {@link #bodiless}). The caller subtracts each DATA
     * frame's bytes and refuses the stream with {@link #checkData} before passing a byte of it on.
     */
    public static long bodyLeft(WmpResponse r, boolean toHead) {
        long declared = bodiless(r.status(), toHead) ? -1 : WmpBoundary.contentLength(r.headers());
        return declared < 0 ? -1 : declared - r.body().readableBytes();
    }

    /**
     * Null when the answer still keeps to its content-length with {@code left} bytes of it to come after a DATA frame
     * ({@code end}: the frame ends the stream); else why not. Only for an answer whose {@link #bodyLeft} was not -1.
     */
    public static Refusal checkData(long left, boolean end) {
        if (!WmpBoundary.bodyOverrun(left, end)) {
            return null;
        }
        return new Refusal(Reason.ANSWER_BAD_CONTENT_LENGTH, left < 0 ? -left + " body bytes past its content-length"
                : "the answer ended " + left + " bytes short of its content-length");
    }

    /**
     * Whether HTTP/1.1 gives the answer no body: an answer to HEAD, a 204 or a 304 (RFC 9110 §6.4.1). Body bytes a
     * peer sends with one are dropped, never written: WMP's frames say where they end, so they cannot confuse the
     * client, while refusing them would turn a provider's error answer to a HEAD (which carries a text body) into a
     * 502.
     */
    public static boolean bodiless(int status, boolean toHead) {
        return toHead || status == 204 || status == 304;
    }

    /** Resets the stream, counts and logs the refusal, and releases {@code frame}: nothing of it reaches the client. */
    public static void refuse(MeshStream stream, WmpFrame frame, Refusal why, Rejections counts) {
        WmpBoundary.refuse(stream, frame, why, counts, stream.session().peer(), LOG);
    }

    /** What the exchange is told of a refused answer: 502, nothing unprocessed (the peer's app may have acted). */
    public static ExchangeError error(Refusal why, String peer) {
        return new ExchangeError(502, KIND, "the answer of peer sidecar " + peer + " was refused: " + why.detail(),
                false);
    }
}
