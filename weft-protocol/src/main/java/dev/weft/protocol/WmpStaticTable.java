package dev.weft.protocol;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The static header table of WMP version 1: header name/value pairs common between proxies, each sent as one byte.
 * An entry with an empty value mostly serves its name (the value follows as a literal). The table is part of the
 * protocol and is reproduced in docs/protocol.md: entries are never renumbered or changed, and new ones are only
 * appended together with a version bump. Indexes run from 1 to {@link #size()}; index 0 means "literal name".
 *
 * <p>Immutable and built once; safe to use from any thread.
 */
public final class WmpStaticTable {
    /** The largest index a header-field byte can carry (its low seven bits). */
    public static final int MAX_INDEX = 127;

    private static final String[] NAMES = new String[MAX_INDEX + 1];
    private static final String[] VALUES = new String[MAX_INDEX + 1];
    private static int size;

    static {
        // Explicit indexes keep the numbering visible and checked: they are on the wire.
        e(1, "content-type", "");
        e(2, "content-type", "application/json");
        e(3, "content-type", "application/json; charset=utf-8");
        e(4, "content-type", "text/plain");
        e(5, "content-type", "text/plain; charset=utf-8");
        e(6, "content-type", "text/html");
        e(7, "content-type", "text/html; charset=utf-8");
        e(8, "content-type", "application/x-www-form-urlencoded");
        e(9, "content-type", "application/octet-stream");
        e(10, "content-type", "application/grpc");
        e(11, "content-type", "application/x-protobuf");
        e(12, "content-type", "application/xml");
        e(13, "accept", "");
        e(14, "accept", "*/*");
        e(15, "accept", "application/json");
        e(16, "accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
        e(17, "accept-encoding", "");
        e(18, "accept-encoding", "gzip, deflate, br");
        e(19, "accept-encoding", "gzip");
        e(20, "accept-encoding", "gzip, deflate");
        e(21, "accept-encoding", "identity");
        e(22, "accept-language", "");
        e(23, "accept-ranges", "bytes");
        e(24, "user-agent", "");
        e(25, "x-forwarded-for", "");
        e(26, "x-forwarded-proto", "");
        e(27, "x-forwarded-proto", "http");
        e(28, "x-forwarded-proto", "https");
        e(29, "x-forwarded-host", "");
        e(30, "x-forwarded-port", "");
        e(31, "x-real-ip", "");
        e(32, "forwarded", "");
        e(33, "via", "");
        e(34, "traceparent", "");
        e(35, "tracestate", "");
        e(36, "baggage", "");
        e(37, "b3", "");
        e(38, "x-b3-traceid", "");
        e(39, "x-b3-spanid", "");
        e(40, "x-b3-parentspanid", "");
        e(41, "x-b3-sampled", "");
        e(42, "x-b3-sampled", "1");
        e(43, "x-request-id", "");
        e(44, "x-correlation-id", "");
        // The deadline header the sidecars send. Until 2026-11-30 this entry read "x-weft-deadline", a name no sidecar
        // sends, so the header went as a 19-byte literal on every request; no release carried the old name.
        e(45, "x-weft-deadline-ms", "");
        e(46, "x-weft-caller", "");
        e(47, "authorization", "");
        e(48, "proxy-authorization", "");
        e(49, "www-authenticate", "");
        e(50, "cookie", "");
        e(51, "set-cookie", "");
        e(52, "cache-control", "");
        e(53, "cache-control", "no-cache");
        e(54, "cache-control", "no-store");
        e(55, "cache-control", "max-age=0");
        e(56, "cache-control", "private");
        e(57, "pragma", "no-cache");
        e(58, "content-encoding", "");
        e(59, "content-encoding", "gzip");
        e(60, "content-encoding", "br");
        e(61, "content-encoding", "deflate");
        e(62, "content-length", "");
        e(63, "content-language", "");
        e(64, "content-disposition", "");
        e(65, "content-range", "");
        e(66, "range", "");
        e(67, "date", "");
        e(68, "server", "");
        e(69, "location", "");
        e(70, "etag", "");
        e(71, "if-none-match", "");
        e(72, "if-match", "");
        e(73, "if-modified-since", "");
        e(74, "if-unmodified-since", "");
        e(75, "last-modified", "");
        e(76, "expires", "");
        e(77, "age", "");
        e(78, "vary", "");
        e(79, "vary", "accept-encoding");
        e(80, "vary", "origin");
        e(81, "origin", "");
        e(82, "referer", "");
        e(83, "access-control-allow-origin", "");
        e(84, "access-control-allow-origin", "*");
        e(85, "access-control-allow-credentials", "true");
        e(86, "access-control-allow-headers", "");
        e(87, "access-control-allow-methods", "");
        e(88, "access-control-expose-headers", "");
        e(89, "access-control-max-age", "");
        e(90, "access-control-request-method", "");
        e(91, "access-control-request-headers", "");
        e(92, "strict-transport-security", "");
        e(93, "x-content-type-options", "nosniff");
        e(94, "x-frame-options", "");
        e(95, "retry-after", "");
        e(96, "link", "");
        e(97, "idempotency-key", "");
    }

    /** The entry a {@code traceparent} is sent under: its name, the value a string (see {@link Traceparent}). */
    static final int TRACEPARENT = 34;

    /** Name to the indexes of its entries, lowest first; the lowest is the one used for "name only". */
    private static final Map<String, int[]> BY_NAME = buildNameIndex();

    /**
     * Entries whose name carries a value that differs on nearly every request (trace, span and request ids): a
     * decoder makes each a String of its own rather than keeping it among the recent ones ({@link StringCache}),
     * where it would only cost a hash and evict a value the peer does send again. Not part of the wire format.
     */
    private static final boolean[] PER_REQUEST = perRequest("traceparent", "b3", "x-b3-traceid", "x-b3-spanid",
            "x-b3-parentspanid", "x-request-id", "x-correlation-id", "idempotency-key");

    private WmpStaticTable() {}

    private static boolean[] perRequest(String... names) {
        boolean[] perRequest = new boolean[MAX_INDEX + 1];
        for (String name : names) {
            for (int i : BY_NAME.get(name)) {
                perRequest[i] = true;
            }
        }
        return perRequest;
    }

    /** Whether the values of entry {@code index}'s name differ on nearly every request (see {@link #PER_REQUEST}). */
    public static boolean perRequestValue(int index) {
        return PER_REQUEST[checkIndex(index)];
    }

    private static void e(int index, String name, String value) {
        if (index != size + 1) {
            throw new ExceptionInInitializerError("static table index " + index + " out of order (expected "
                    + (size + 1) + ")");
        }
        NAMES[index] = name;
        VALUES[index] = value;
        size = index;
    }

    private static Map<String, int[]> buildNameIndex() {
        Map<String, int[]> byName = new HashMap<>();
        for (int i = 1; i <= size; i++) {
            int[] known = byName.get(NAMES[i]);
            int[] grown = known == null ? new int[1] : Arrays.copyOf(known, known.length + 1);
            grown[grown.length - 1] = i;
            byName.put(NAMES[i], grown);
        }
        return Map.copyOf(byName);
    }

    /** Number of entries; valid indexes are 1..size(). */
    public static int size() {
        return size;
    }

    public static String name(int index) {
        return NAMES[checkIndex(index)];
    }

    public static String value(int index) {
        return VALUES[checkIndex(index)];
    }

    /** True if {@code index} names an entry of this version's table. */
    public static boolean contains(int index) {
        return index >= 1 && index <= size;
    }

    /**
     * How a field is best sent: {@code 0x80 | i} if entry i holds both name and value, {@code i} if entry i holds
     * the name only, 0 if the name is not in the table. This is exactly the first byte of the encoded field.
     */
    public static int lookup(String name, String value) {
        int[] indexes = BY_NAME.get(name);
        if (indexes == null) {
            return 0;
        }
        for (int i : indexes) {
            if (VALUES[i].equals(value)) {
                return 0x80 | i;
            }
        }
        return indexes[0];
    }

    private static int checkIndex(int index) {
        if (!contains(index)) {
            throw new IndexOutOfBoundsException("static table index " + index + " (expected 1.." + size + ")");
        }
        return index;
    }
}
