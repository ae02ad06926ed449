package dev.weft.dataplane.downstream;

import dev.weft.dataplane.downstream.WmpBoundary.FieldReasons;
import dev.weft.dataplane.downstream.WmpBoundary.Refusal;
import dev.weft.dataplane.http.Http1Grammar;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpRequest;

import static dev.weft.dataplane.downstream.WmpBoundary.quote;

/**
 * The provider side's boundary from WMP to the app: every REQUEST a peer sidecar sends is checked here before any of
 * it becomes HTTP/1.1 for the app. WMP carries method, authority, path and fields as strings, so without this a peer
 * could put CR LF into any of them and write header lines (or a second request) of its own into the app's
 * connection, or name its own framing. The checks are an allow-list, so inputs nobody has thought of yet are refused
 * too: the method is an RFC 9110 token (not CONNECT), the path is origin form in visible ASCII (or {@code *} for
 * OPTIONS), the authority is {@code host[:port]}, each name is a lower-case token and each value is field-content
 * (HTAB, SP, visible ASCII, obs-text; no whitespace at its edges). Host and framing come only from WMP's own fields:
 * {@code host} and the hop-by-hop names are refused, and {@code content-length}, which WMP allows for the app's hop,
 * must be one number that the stream's body bytes match ({@link #bodyLeft}). The field rules are those of the
 * consumer side's boundary too ({@link WmpBoundary}).
 *
 * <p>A refused request resets its stream ({@code CANCEL PROTOCOL_ERROR}) and is counted in
 * {@code weft_rejected_total{boundary="wmp_to_provider"}}; the connection and its other streams carry on.
 *
 * <p>Thread: the mesh connection's Worker loop (stateless; the static methods may run anywhere). Buffers:
 * {@link #refuse} releases the frame it refuses; {@link #check} touches no buffer.
 */
public final class WmpRequestValidator {
    private static final System.Logger LOG = System.getLogger(WmpRequestValidator.class.getName());
    private static final FieldReasons FIELDS = new FieldReasons(Reason.BAD_FIELD_NAME, Reason.BAD_FIELD_VALUE,
            Reason.FRAMING_FIELD, Reason.BAD_CONTENT_LENGTH);

    private WmpRequestValidator() {}

    /** Null when {@code r} may go to the app; else why not. Allocates only to describe a refusal. */
    public static Refusal check(WmpRequest r) {
        String method = r.method();
        if (!WmpBoundary.isToken(method) || method.equals("CONNECT")) {
            return new Refusal(Reason.BAD_METHOD, "method " + quote(method) + " (expected a token, not CONNECT)");
        }
        if (!isOriginForm(r.path(), method)) {
            return new Refusal(Reason.BAD_TARGET, "path " + quote(r.path())
                    + " (expected /path?query in visible ASCII, or * with OPTIONS)");
        }
        if (!Http1Grammar.validHost(r.authority())) {
            return new Refusal(Reason.BAD_AUTHORITY, "authority " + quote(r.authority()) + " (expected host[:port])");
        }
        Refusal bad = WmpBoundary.checkFields(r.headers(), FIELDS, true);
        if (bad != null) {
            return bad;
        }
        long declared = WmpBoundary.contentLength(r.headers());
        return declared < 0 ? null : WmpBoundary.checkFirstBody(declared, r.body().readableBytes(), r.endStream(),
                Reason.BAD_CONTENT_LENGTH, "REQUEST");
    }

    /**
     * The body bytes the request's content-length still expects after its REQUEST frame, or -1 when it declared
     * none. Call only for a request {@link #check} accepted. The caller subtracts each DATA frame's bytes and refuses
     * the stream when the result goes below 0, or is not 0 at END_STREAM ({@link #bodyOverrun}).
     */
    public static long bodyLeft(WmpRequest r) {
        long declared = WmpBoundary.contentLength(r.headers());
        return declared < 0 ? -1 : declared - r.body().readableBytes();
    }

    /** Whether a stream whose {@link #bodyLeft} is now {@code left} broke its content-length ({@code end}: its last frame). */
    public static boolean bodyOverrun(long left, boolean end) {
        return WmpBoundary.bodyOverrun(left, end);
    }

    /** Resets the stream, counts and logs the refusal, and releases {@code frame}: nothing of it reaches the app. */
    public static void refuse(MeshStream stream, WmpFrame frame, Refusal why, Rejections counts, String peer) {
        WmpBoundary.refuse(stream, frame, why, counts, peer, LOG);
    }

    /** Origin form: {@code /} then visible ASCII (what Weft's HTTP/1.1 listeners accept), or {@code *} for OPTIONS. */
    static boolean isOriginForm(String path, String method) {
        if (path.equals("*")) {
            return method.equals("OPTIONS");
        }
        if (path.isEmpty() || path.charAt(0) != '/') {
            return false;
        }
        for (int i = 1; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c <= 0x20 || c >= 0x7F) {
                return false;
            }
        }
        return true;
    }
}
