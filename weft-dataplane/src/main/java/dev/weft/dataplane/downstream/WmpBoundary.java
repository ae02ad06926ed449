package dev.weft.dataplane.downstream;

import dev.weft.dataplane.http.Http1Grammar;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpHeaders;

/**
 * What the two WMP boundaries share ({@link WmpRequestValidator} on the provider side, {@link WmpAnswerValidator} on
 * the consumer side): the rules for a frame's header fields, and how a refusal ends a stream. A peer sends names and
 * values as strings that the receiving sidecar writes into an HTTP/1.1 head (the app's request, or the client's
 * answer), so both sides hold them to one allow-list (RFC 9110 §5.1, §5.5): each name a lower-case token, each value
 * field-content, no hop-by-hop name ({@link ProxyHeaders#isHopByHop}: framing is WMP's own), and at most one
 * {@code content-length}, of decimal digits, which the stream's body bytes must then match.
 *
 * <p>Thread: the checks are pure functions and run anywhere; {@link #refuse} runs on the stream's Worker loop.
 * Buffers: {@link #refuse} releases the frame it refuses; nothing else here touches a buffer.
 */
public final class WmpBoundary {
    /** Longest content-length accepted: 18 digits always fit in a long. */
    private static final int MAX_LENGTH_DIGITS = 18;

    private WmpBoundary() {}

    /** Why a frame was refused: what the counter says, and a line for the debug log. */
    public record Refusal(Reason reason, String detail) {}

    /** The reasons one boundary counts its field refusals under (each boundary has its own counter series). */
    record FieldReasons(Reason name, Reason value, Reason framing, Reason length) {}

    /**
     * Null when every field may be written into an HTTP/1.1 head, and then the fields are marked so
     * ({@link WmpHeaders#markVetted}: the HTTP/1.1 writer does not scan them again); else the first that may not.
     * Allocates only to describe a refusal.
     *
     * @param host whether {@code host} is refused too (a request's Host travels as its authority)
     */
    static Refusal checkFields(WmpHeaders h, FieldReasons why, boolean host) {
        boolean length = false;
        for (int i = 0; i < h.size(); i++) {
            String name = h.name(i);
            String value = h.value(i);
            if (!isLowerToken(name)) {
                return new Refusal(why.name(), "field name " + quote(name) + " (expected a lower-case token)");
            }
            if (!isFieldValue(value)) {
                return new Refusal(why.value(), "the value of " + name + ", " + quote(value)
                        + " (expected HTAB, SP, visible ASCII or obs-text, no whitespace at either end)");
            }
            if (ProxyHeaders.isHopByHop(name) || (host && name.equals("host"))) {
                return new Refusal(why.framing(), "field " + name + (host
                        ? " (Host and framing travel in WMP's own fields; hop-by-hop fields are not sent)"
                        : " (framing travels in WMP's own frames; hop-by-hop fields are not sent)"));
            }
            if (name.equals("content-length")) {
                if (length || parseLength(value) < 0) {
                    return new Refusal(why.length(), "content-length " + quote(value)
                            + " (expected one decimal number)");
                }
                length = true;
            }
        }
        h.markVetted();
        return null;
    }

    /** The content-length of fields {@link #checkFields} accepted, or -1 when they declare none. */
    static long contentLength(WmpHeaders h) {
        String v = h.get("content-length");
        return v == null ? -1 : parseLength(v);
    }

    /**
     * Null when a head frame's own {@code body} bytes fit its {@code declared} content-length: no more than it, and
     * exactly it when the frame ends the stream.
     */
    static Refusal checkFirstBody(long declared, int body, boolean end, Reason reason, String frame) {
        if (body > declared || (end && body != declared)) {
            return new Refusal(reason, "content-length " + declared + " with " + body
                    + (end ? " body bytes in all" : " body bytes in the " + frame + " frame alone"));
        }
        return null;
    }

    /** Whether a stream whose content-length still expects {@code left} bytes broke it ({@code end}: its end). */
    public static boolean bodyOverrun(long left, boolean end) {
        return left < 0 || (end && left > 0);
    }

    /**
     * Resets the stream ({@code CANCEL PROTOCOL_ERROR}: the connection and its other streams carry on), counts and
     * logs the refusal, and releases {@code frame}: nothing of it goes further.
     *
     * @param log the boundary's own logger, the name docs/operations.md tells users to turn to debug
     */
    static void refuse(MeshStream stream, WmpFrame frame, Refusal why, Rejections counts, String peer,
                       System.Logger log) {
        frame.release();
        counts.increment(why.reason());
        stream.cancel(WmpError.PROTOCOL_ERROR);
        if (log.isLoggable(System.Logger.Level.DEBUG)) {
            log.log(System.Logger.Level.DEBUG, "weft: refused stream " + stream.id() + " from " + peer + " ("
                    + why.reason().label() + "): " + why.detail());
        }
    }

    // ---- the allow-lists ----

    /** RFC 9110 token: the HTTP/1.1 decoders' allow-list ({@link Http1Grammar#TCHAR}). */
    static boolean isToken(String s) {
        return Http1Grammar.all(s, Http1Grammar.TCHAR);
    }

    static boolean isLowerToken(String s) {
        return Http1Grammar.all(s, Http1Grammar.LOWER_TCHAR);
    }

    /** field-content (RFC 9110 §5.5): HTAB, SP, VCHAR, obs-text, starting and ending with neither HTAB nor SP. */
    static boolean isFieldValue(String v) {
        int n = v.length();
        // Empty is a valid value; otherwise the HTTP/1.1 decoders' field allow-list, without edge whitespace.
        return n == 0 || (!isWhitespace(v.charAt(0)) && !isWhitespace(v.charAt(n - 1))
                && Http1Grammar.all(v, Http1Grammar.FIELD));
    }

    private static boolean isWhitespace(char c) {
        return c == ' ' || c == '\t';
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
    static String quote(String s) {
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
