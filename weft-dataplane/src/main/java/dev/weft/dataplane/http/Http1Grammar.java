package dev.weft.dataplane.http;

import dev.weft.protocol.WmpStaticTable;
import io.netty.util.concurrent.FastThreadLocal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The byte classes of HTTP/1.1 (RFC 9110 §5.6, RFC 9112, RFC 3986) as lookup tables, and the header names and values
 * common enough that the decoders hand out one shared String for them instead of a new one per message. Both
 * decoders ({@link Http1RequestDecoder}, {@link Http1ResponseDecoder}) and {@link Http1Writer} test bytes here, so
 * that what one side writes the other side accepts.
 *
 * <p>Allow-lists only: a byte is valid where its class bit is set, so any byte nobody thought of is refused.
 *
 * <p>Immutable once built (in the class initialiser); safe on any thread ({@link #validHost(String)} copies into a
 * scratch array each thread has of its own).
 */
public final class Http1Grammar {
    /** RFC 9110 tchar: the bytes of a token (method, header name, chunk extension name). */
    public static final int TCHAR = 1;
    /** VCHAR, 0x21-0x7E: a request target, an authority. */
    static final int VCHAR = 2;
    /** A field value byte: HTAB, SP, VCHAR, obs-text (0x80-0xFF). Also a reason phrase byte. */
    public static final int FIELD = 4;
    static final int HEX = 8;
    static final int DIGIT = 16;
    /** RFC 3986 unreserved (ALPHA DIGIT - . _ ~): Weft's reg-name, stricter than RFC 3986's (no sub-delims, no %). */
    static final int HOST = 32;
    /** qdtext of a quoted string (RFC 9110 §5.6.4): HTAB, SP, VCHAR except '"' and '\', obs-text. */
    static final int QDTEXT = 64;
    /** tchar without upper-case letters: a field name as WMP carries it (lower case, like HTTP/2's). */
    public static final int LOWER_TCHAR = 128;

    private static final byte[] CLASS = new byte[256];
    /** ASCII lower case of each byte; other bytes map to themselves. */
    static final byte[] LOWER = new byte[256];

    static final byte SP = ' ';
    static final byte HTAB = '\t';
    static final byte CR = '\r';
    static final byte LF = '\n';

    // The methods of RFC 9110 and PATCH, shared: a request's method costs no String when it is one of them.
    static final String GET = "GET";
    static final String POST = "POST";
    static final String PUT = "PUT";
    static final String DELETE = "DELETE";
    static final String HEAD = "HEAD";
    static final String OPTIONS = "OPTIONS";
    static final String PATCH = "PATCH";
    static final String TRACE = "TRACE";
    static final String CONNECT = "CONNECT";

    /** What the decoders do with a known name beyond listing it. */
    static final int ID_OTHER = 0;
    static final int ID_HOST = 1;
    static final int ID_CONTENT_LENGTH = 2;
    static final int ID_TRANSFER_ENCODING = 3;
    static final int ID_CONNECTION = 4;
    static final int ID_EXPECT = 5;

    /** Open addressing, power of two, at most half full: a lookup rarely probes twice. */
    private static final Name[] NAMES = new Name[512];

    static {
        for (int b = 0; b < 256; b++) {
            int c = 0;
            boolean alpha = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
            boolean digit = b >= '0' && b <= '9';
            if (alpha || digit || "!#$%&'*+-.^_`|~".indexOf(b) >= 0) {
                c |= TCHAR;
                if (!(b >= 'A' && b <= 'Z')) {
                    c |= LOWER_TCHAR;
                }
            }
            if (b >= 0x21 && b <= 0x7E) {
                c |= VCHAR | FIELD;
                if (b != '"' && b != '\\') {
                    c |= QDTEXT;
                }
            }
            if (b == SP || b == HTAB || b >= 0x80) {
                c |= FIELD | QDTEXT;
            }
            if (digit || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')) {
                c |= HEX;
            }
            if (digit) {
                c |= DIGIT;
            }
            if (alpha || digit || b == '-' || b == '.' || b == '_' || b == '~') {
                c |= HOST;
            }
            CLASS[b] = (byte) c;
            LOWER[b] = (byte) (b >= 'A' && b <= 'Z' ? b + 32 : b);
        }

        Map<String, List<String>> known = new LinkedHashMap<>();
        for (int i = 1; i <= WmpStaticTable.size(); i++) {
            List<String> values = known.computeIfAbsent(WmpStaticTable.name(i), n -> new ArrayList<>());
            if (!WmpStaticTable.value(i).isEmpty()) {
                values.add(WmpStaticTable.value(i));
            }
        }
        // Names (and values) the static table leaves out because WMP drops or rebuilds them, but every HTTP/1.1
        // message carries some of them; and names browsers and RPC clients send on most requests.
        String[][] more = {
                {"host"}, {"connection", "keep-alive", "close"}, {"content-length", "0"},
                {"transfer-encoding", "chunked"}, {"expect", "100-continue"}, {"keep-alive"}, {"te", "trailers"},
                {"trailer"}, {"upgrade"}, {"proxy-connection", "keep-alive"}, {"accept-charset"},
                {"x-weft-error"}, {"x-weft-unprocessed"}, {"x-requested-with"}, {"x-api-key"}, {"x-amzn-trace-id"},
                {"sec-fetch-site"}, {"sec-fetch-mode"}, {"sec-fetch-dest"}, {"sec-fetch-user"}, {"sec-ch-ua"},
                {"sec-ch-ua-mobile"}, {"sec-ch-ua-platform"}, {"upgrade-insecure-requests", "1"}, {"dnt"},
                {"priority"}, {"allow"}, {"alt-svc"}, {"content-security-policy"}, {"referrer-policy"},
                {"x-powered-by"}, {"server-timing"}, {"grpc-timeout"}, {"grpc-encoding"},
                {"grpc-accept-encoding"}, {"grpc-status"}, {"grpc-message"}, {"x-xss-protection"}};
        for (String[] m : more) {
            List<String> values = known.computeIfAbsent(m[0], n -> new ArrayList<>());
            for (int i = 1; i < m.length; i++) {
                values.add(m[i]);
            }
        }
        known.forEach((name, values) -> add(new Name(name, id(name), values)));
    }

    private Http1Grammar() {}

    private static int id(String name) {
        return switch (name) {
            case "host" -> ID_HOST;
            case "content-length" -> ID_CONTENT_LENGTH;
            case "transfer-encoding" -> ID_TRANSFER_ENCODING;
            case "connection" -> ID_CONNECTION;
            case "expect" -> ID_EXPECT;
            default -> ID_OTHER;
        };
    }

    private static void add(Name n) {
        int i = n.hash & (NAMES.length - 1);
        while (NAMES[i] != null) {
            i = (i + 1) & (NAMES.length - 1);
        }
        NAMES[i] = n;
    }

    /**
     * Whether {@code s} is not empty and every char of it is a byte of class {@code cls}: the same allow-lists for
     * text that arrives as Strings (WMP's fields) as for the bytes the HTTP/1.1 decoders scan.
     */
    public static boolean all(CharSequence s, int cls) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c > 0xFF || !is((byte) c, cls)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link #validHost(byte[], int, int)} for a String (a char beyond Latin-1 is never valid). Through a scratch
     * array of the thread's own: {@code getBytes} made an array per WMP request on the provider side (JFR).
     */
    public static boolean validHost(String a) {
        int n = a.length();
        byte[] b = HOST_SCRATCH.get();
        if (b.length < n) {
            b = new byte[Math.max(n, b.length * 2)];
            HOST_SCRATCH.set(b);
        }
        for (int i = 0; i < n; i++) {
            char c = a.charAt(i);
            if (c > 0xFF) {
                return false;
            }
            b[i] = (byte) c;
        }
        return validHost(b, 0, n);
    }

    private static final FastThreadLocal<byte[]> HOST_SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[256];
        }
    };

    static boolean is(byte b, int cls) {
        return (CLASS[b & 0xFF] & cls) != 0;
    }

    /** The hash the decoders fold over a name's bytes as they scan it; the same for any case. */
    static int hashStep(int h, byte b) {
        return 31 * h + LOWER[b & 0xFF];
    }

    /** A known header name, or null: {@code a[off, off+len)} compared without regard to case. */
    static Name lookup(byte[] a, int off, int len, int hash) {
        int i = hash & (NAMES.length - 1);
        for (Name n; (n = NAMES[i]) != null; i = (i + 1) & (NAMES.length - 1)) {
            if (n.hash == hash && equalsLower(n.bytes, a, off, len)) {
                return n;
            }
        }
        return null;
    }

    /** Whether {@code a[off, off+len)}, lower-cased, equals {@code lower} (which is lower case). */
    static boolean equalsLower(byte[] lower, byte[] a, int off, int len) {
        if (lower.length != len) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (lower[i] != LOWER[a[off + i] & 0xFF]) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code a[off, end)} is a valid {@code host[:port]}: a reg-name or IPv4 address, or [IPv6]. */
    static boolean validHost(byte[] a, int off, int end) {
        int i = off;
        if (i < end && a[i] == '[') {
            // IP-literal: hex digits, colons and the dots of an embedded IPv4; no zone (RFC 6874 is for URIs only).
            int colons = 0;
            for (i++; i < end && a[i] != ']'; i++) {
                byte b = a[i];
                if (b == ':') {
                    colons++;
                } else if (!is(b, HEX) && b != '.') {
                    return false;
                }
            }
            if (i == end || colons < 2 || colons > 7) {
                return false;
            }
            i++; // ']'
        } else {
            int start = i;
            while (i < end && is(a[i], HOST)) {
                i++;
            }
            if (i == start) {
                return false;
            }
        }
        if (i == end) {
            return true;
        }
        if (a[i] != ':') {
            return false;
        }
        int digits = end - i - 1;
        if (digits < 1 || digits > 5) {
            return false;
        }
        int port = 0;
        for (i++; i < end; i++) {
            if (!is(a[i], DIGIT)) {
                return false;
            }
            port = port * 10 + (a[i] - '0');
        }
        return port <= 65535;
    }

    /** The method token {@code a[0, len)}: one of the shared constants when it is one of them (case-sensitive). */
    static String method(byte[] a, int len) {
        String m = switch (len) {
            case 3 -> a[0] == 'G' ? GET : a[0] == 'P' ? PUT : null;
            case 4 -> a[0] == 'P' ? POST : a[0] == 'H' ? HEAD : null;
            case 5 -> a[0] == 'P' ? PATCH : a[0] == 'T' ? TRACE : null;
            case 6 -> a[0] == 'D' ? DELETE : null;
            case 7 -> a[0] == 'O' ? OPTIONS : a[0] == 'C' ? CONNECT : null;
            default -> null;
        };
        // The first byte picked a candidate; the rest must match too.
        if (m != null) {
            for (int i = 1; i < len; i++) {
                if (a[i] != m.charAt(i)) {
                    return new String(a, 0, len, StandardCharsets.ISO_8859_1);
                }
            }
            return m;
        }
        return new String(a, 0, len, StandardCharsets.ISO_8859_1);
    }

    /** A byte as an error message shows it: {@code 0x0d (CR)}. */
    static String describe(byte b) {
        int v = b & 0xFF;
        String hex = String.format("0x%02x", v);
        return switch (v) {
            case 0 -> hex + " (NUL)";
            case '\r' -> hex + " (a CR not followed by LF)";
            case '\n' -> hex + " (LF)";
            case '\t' -> hex + " (HTAB)";
            case ' ' -> hex + " (SP)";
            case 0x7F -> hex + " (DEL)";
            default -> v < 0x20 ? hex + " (a control character)" : v >= 0x80 ? hex + " (not ASCII)"
                    : hex + " ('" + (char) v + "')";
        };
    }

    /** Up to 64 bytes of {@code a[off, end)} for an error message, as Latin-1, with non-printable bytes as '?'. */
    static String quote(byte[] a, int off, int end) {
        int n = Math.min(end - off, 64);
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            int v = a[off + i] & 0xFF;
            c[i] = v >= 0x20 && v != 0x7F ? (char) v : '?';
        }
        return "'" + new String(c) + (end - off > n ? "...'" : "'");
    }

    /** A String for an error message: up to 64 characters of it, quoted. */
    static String quote(String s) {
        return s.length() > 64 ? "'" + s.substring(0, 64) + "...'" : "'" + s + "'";
    }

    /**
     * A known header name: its lower-case String and bytes, what the decoders do with it, and the values common
     * enough to share.
     */
    static final class Name {
        final String name;
        final byte[] bytes;
        final int hash;
        final int id;
        private final byte[][] valueBytes;
        private final String[] values;

        Name(String name, int id, List<String> values) {
            this.name = name;
            this.bytes = name.getBytes(StandardCharsets.US_ASCII);
            int h = 0;
            for (byte b : bytes) {
                h = hashStep(h, b);
            }
            this.hash = h;
            this.id = id;
            this.values = values.toArray(new String[0]);
            this.valueBytes = new byte[this.values.length][];
            for (int i = 0; i < this.values.length; i++) {
                valueBytes[i] = this.values[i].getBytes(StandardCharsets.ISO_8859_1);
            }
        }

        /** The shared String for the value {@code a[off, off+len)} (compared case-sensitively), or null. */
        String value(byte[] a, int off, int len) {
            for (int i = 0; i < valueBytes.length; i++) {
                byte[] v = valueBytes[i];
                if (v.length == len && java.util.Arrays.equals(v, 0, len, a, off, off + len)) {
                    return values[i];
                }
            }
            return null;
        }
    }
}
