package dev.weft.dataplane.downstream;

import dev.weft.dataplane.http.Http1Grammar;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;

/**
 * The provider side's boundary from WMP to the app: every REQUEST a peer sidecar sends is checked here before any of
 * it becomes HTTP/1.1 for the app. WMP carries method, authority, path and fields as strings, so without this a peer
 * could put CR LF into any of them and write header lines (or a second request) of its own into the app's
 * connection, or name its own framing. The checks are an allow-list, so inputs nobody has thought of yet are refused
 * too: the method is an RFC 9110 token (not CONNECT), the path is origin form in visible ASCII (or {@code *} for
 * OPTIONS), the authority is {@code host[:port]}, each name is a lower-case token and each value is field-content
 * (HTAB, SP, visible ASCII, obs-text; no whitespace at its edges). Host and framing come only from WMP's own fields:
 * {@code host} and the hop-by-hop names are refused, and {@code content-length}, which WMP allows for the app's hop,
 * must be one number that the stream's body bytes match ({@link #bodyLeft}).
 *
 * <p>A refused request resets its stream ({@code CANCEL PROTOCOL_ERROR}) and is counted in
 * {@code weft_rejected_total{boundary="wmp_to_provider"}}; the connection and its other streams carry on.
 *
 * <p>Thread: the mesh connection's Worker loop (stateless; the static methods may run anywhere). Buffers:
 * {@link #refuse} releases the frame it refuses; {@link #check} touches no buffer.
 */
public final class WmpRequestValidator {
    private static final System.Logger LOG = System.getLogger(WmpRequestValidator.class.getName());
    /** Longest content-length accepted: 18 digits always fit in a long. */
    private static final int MAX_LENGTH_DIGITS = 18;

    private WmpRequestValidator() {}

    /** Why a request was refused: what the counter says, and a line for the debug log. */
    public record Refusal(Reason reason, String detail) {}

    /** Null when {@code r} may go to the app; else why not. Allocates only to describe a refusal. */
    public static Refusal check(WmpRequest r) {
        String method = r.method();
        if (!isToken(method) || method.equals("CONNECT")) {
            return new Refusal(Reason.BAD_METHOD, "method " + quote(method) + " (expected a token, not CONNECT)");
        }
        if (!isOriginForm(r.path(), method)) {
            return new Refusal(Reason.BAD_TARGET, "path " + quote(r.path())
                    + " (expected /path?query in visible ASCII, or * with OPTIONS)");
        }
        if (!isHostPort(r.authority())) {
            return new Refusal(Reason.BAD_AUTHORITY, "authority " + quote(r.authority()) + " (expected host[:port])");
        }
        WmpHeaders h = r.headers();
        boolean length = false;
        for (int i = 0; i < h.size(); i++) {
            String name = h.name(i);
            String value = h.value(i);
            if (!isLowerToken(name)) {
                return new Refusal(Reason.BAD_FIELD_NAME, "field name " + quote(name) + " (expected a lower-case token)");
            }
            if (!isFieldValue(value)) {
                return new Refusal(Reason.BAD_FIELD_VALUE, "the value of " + name + ", " + quote(value)
                        + " (expected HTAB, SP, visible ASCII or obs-text, no whitespace at either end)");
            }
            if (isFramingOrHopByHop(name)) {
                return new Refusal(Reason.FRAMING_FIELD, "field " + name
                        + " (Host and framing travel in WMP's own fields; hop-by-hop fields are not sent)");
            }
            if (name.equals("content-length")) {
                if (length || parseLength(value) < 0) {
                    return new Refusal(Reason.BAD_CONTENT_LENGTH, "content-length " + quote(value)
                            + " (expected one decimal number)");
                }
                length = true;
            }
        }
        if (length) {
            long declared = parseLength(h.get("content-length"));
            int first = r.body().readableBytes();
            if (first > declared || (r.endStream() && first != declared)) {
                return new Refusal(Reason.BAD_CONTENT_LENGTH, "content-length " + declared + " with " + first
                        + (r.endStream() ? " body bytes in all" : " body bytes in the REQUEST frame alone"));
            }
        }
        return null;
    }

    /**
     * The body bytes the request's content-length still expects after its REQUEST frame, or -1 when it declared
     * none. Call only for a request {@link #check} accepted. The caller subtracts each DATA frame's bytes and refuses
     * the stream when the result goes below 0, or is not 0 at END_STREAM ({@link #bodyOverrun}).
     */
    public static long bodyLeft(WmpRequest r) {
        String v = r.headers().get("content-length");
        return v == null ? -1 : parseLength(v) - r.body().readableBytes();
    }

    /** Whether a stream whose {@link #bodyLeft} is now {@code left} broke its content-length ({@code end}: its last frame). */
    public static boolean bodyOverrun(long left, boolean end) {
        return left < 0 || (end && left > 0);
    }

    /** Resets the stream, counts and logs the refusal, and releases {@code frame}: nothing of it reaches the app. */
    public static void refuse(MeshStream stream, WmpFrame frame, Refusal why, Rejections counts, String peer) {
        frame.release();
        counts.increment(why.reason());
        stream.cancel(WmpError.PROTOCOL_ERROR);
        if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
            LOG.log(System.Logger.Level.DEBUG, "weft: refused stream " + stream.id() + " from " + peer + " ("
                    + why.reason().label() + "): " + why.detail());
        }
    }

    // ---- the allow-lists ----

    /** RFC 9110 token: the HTTP/1.1 decoders' allow-list ({@link Http1Grammar#TCHAR}). */
    static boolean isToken(String s) {
        return Http1Grammar.all(s, Http1Grammar.TCHAR);
    }

    private static boolean isLowerToken(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                return false;
            }
        }
        return isToken(s);
    }

    /** field-content (RFC 9110 §5.5): HTAB, SP, VCHAR, obs-text, starting and ending with neither HTAB nor SP. */
    static boolean isFieldValue(String v) {
        int n = v.length();
        if (n > 0 && (isWhitespace(v.charAt(0)) || isWhitespace(v.charAt(n - 1)))) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = v.charAt(i);
            if (c == 0x7F || c > 0xFF || (c < 0x20 && c != '\t')) {
                return false;
            }
        }
        return true;
    }

    private static boolean isWhitespace(char c) {
        return c == ' ' || c == '\t';
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

    /** {@code host[:port]}: the HTTP/1.1 listeners' rule ({@link Http1Grammar#validHost(String)}). */
    static boolean isHostPort(String a) {
        return Http1Grammar.validHost(a);
    }

    /**
     * Names a peer must not send (docs/protocol.md, "Header fields"): Host is the authority, framing is WMP's, and
     * hop-by-hop fields belong to the hop they were sent on.
     */
    static boolean isFramingOrHopByHop(String name) {
        return switch (name) {
            case "host", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "te", "upgrade",
                 "trailer" -> true;
            default -> false;
        };
    }

    /** 1 to 18 decimal digits as a number; -1 for anything else (sign, space, list, empty, too long). */
    static long parseLength(String v) {
        int n = v.length();
        if (n == 0 || n > MAX_LENGTH_DIGITS) {
            return -1;
        }
        long x = 0;
        for (int i = 0; i < n; i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            x = x * 10 + (c - '0');
        }
        return x;
    }

    /** Up to 64 characters for a log line, control characters shown as {@code \xNN} so the line stays one line. */
    private static String quote(String s) {
        StringBuilder sb = new StringBuilder(Math.min(s.length(), 64) + 2).append('\'');
        for (int i = 0; i < s.length() && i < 64; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                sb.append(String.format("\\x%02x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append(s.length() > 64 ? "'..." : "'").toString();
    }
}
