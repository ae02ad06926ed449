package dev.weft.dataplane.observe;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes JSON as UTF-8 bytes into one growable array: just what span batches and access log lines need, with
 * correct string escaping. The array is reused from batch to batch ({@link #reset}), and ids, numbers and slices of
 * strings are written in place, so encoding a span allocates nothing (but a small copy of a string's quoted form the
 * first time it is seen): at 100% sampling the exporter encodes every request twice (both sidecars), and a
 * StringBuilder, its String and the String's bytes were each a full copy.
 *
 * <p>Used on the exporter and access log threads, never on an event loop; not thread-safe.
 */
final class JsonText {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
    /** "00", "01" ... "99": numbers are written two digits at a time. */
    private static final byte[] PAIRS = new byte[200];
    private static final long[] POWERS_OF_TEN = new long[19];
    /** Slots of the identity cache of quoted strings (a power of two). */
    private static final int CACHED = 1024;
    /** Slots looked at from a string's home slot: a few dozen strings in use then (nearly) never evict each other. */
    private static final int PROBES = 4;
    /** Strings longer than this are not cached: paths and other values that change with every request. */
    private static final int MAX_CACHED_LENGTH = 64;

    static {
        POWERS_OF_TEN[0] = 1;
        for (int i = 1; i < POWERS_OF_TEN.length; i++) {
            POWERS_OF_TEN[i] = POWERS_OF_TEN[i - 1] * 10;
        }
        for (int i = 0; i < 100; i++) {
            PAIRS[2 * i] = (byte) ('0' + i / 10);
            PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    private byte[] buf;
    private int len;
    /** Whether the next value in the current object or array needs a comma before it. */
    private boolean comma;
    /**
     * Field names and most values are the same String objects span after span (literals, the service, the route,
     * the endpoint, a connection's peer): their quoted UTF-8 form is kept by identity, one slot per identity hash,
     * and copied in (a small open-addressing table). Escaping them char by char again was most of the encoder's time (JFR: String.charAt at 64%).
     */
    private final String[] cachedString = new String[CACHED];
    private final byte[][] cachedBytes = new byte[CACHED][];

    JsonText(int initialCapacity) {
        buf = new byte[Math.max(64, initialCapacity)];
    }

    /** Empties the buffer for the next document, keeping its capacity. */
    JsonText reset() {
        len = 0;
        comma = false;
        return this;
    }

    /** The encoded bytes are {@code array()[0 .. length())}; valid until the next write or reset. */
    byte[] array() {
        return buf;
    }

    int length() {
        return len;
    }

    @Override
    public String toString() {
        return new String(buf, 0, len, StandardCharsets.UTF_8);
    }

    JsonText beginObject() {
        separate();
        put('{');
        comma = false;
        return this;
    }

    JsonText endObject() {
        put('}');
        comma = true;
        return this;
    }

    JsonText beginArray() {
        separate();
        put('[');
        comma = false;
        return this;
    }

    JsonText endArray() {
        put(']');
        comma = true;
        return this;
    }

    /** Ends a line (JSON lines); the next value starts without a comma. */
    JsonText newline() {
        put('\n');
        comma = false;
        return this;
    }

    JsonText name(String name) {
        separate();
        quoteCached(name);
        put(':');
        comma = false;
        return this;
    }

    JsonText value(String v) {
        separate();
        if (v == null) {
            putAscii(NULL);
        } else {
            quoteCached(v);
        }
        comma = true;
        return this;
    }

    /** The characters {@code v[from, to)} as a string, without cutting a substring first. */
    JsonText value(String v, int from, int to) {
        separate();
        quote(v, from, to, false);
        comma = true;
        return this;
    }

    /** {@code v} in lower case (ASCII letters only: method and route names). */
    JsonText lowerValue(String v) {
        separate();
        quote(v, 0, v.length(), true);
        comma = true;
        return this;
    }

    /** {@code "a b"} in lower case, without building the joined String. */
    JsonText lowerValue(String a, String b) {
        separate();
        put('"');
        chars(a, 0, a.length(), true);
        put(' ');
        chars(b, 0, b.length(), true);
        put('"');
        comma = true;
        return this;
    }

    JsonText value(long v) {
        separate();
        digits(v);
        comma = true;
        return this;
    }

    /** A number as a JSON string, e.g. {@code "200"}: Zipkin tags and OTLP int64 values are strings. */
    JsonText quotedValue(long v) {
        return quotedValue(v, "");
    }

    /** A number followed by literal ASCII digits as a JSON string, e.g. micros + "000" for OTLP nanos. */
    JsonText quotedValue(long v, String suffix) {
        separate();
        put('"');
        digits(v);
        for (int i = 0; i < suffix.length(); i++) {
            put(suffix.charAt(i));
        }
        put('"');
        comma = true;
        return this;
    }

    /** 16 lower-case hex digits, quoted: a span id. */
    JsonText hexValue(long v) {
        separate();
        put('"');
        hex(v);
        put('"');
        comma = true;
        return this;
    }

    /** 32 lower-case hex digits, quoted: a 128-bit trace id. */
    JsonText hexValue(long hi, long lo) {
        separate();
        put('"');
        hex(hi);
        hex(lo);
        put('"');
        comma = true;
        return this;
    }

    /** Milliseconds with microsecond precision, e.g. 12.345: readable in logs without a float formatter. */
    JsonText millis(long micros) {
        separate();
        if (micros < 0) {
            put('-');
            micros = -micros;
        }
        digits(micros / 1000);
        put('.');
        long frac = micros % 1000;
        if (frac < 100) {
            put('0');
        }
        if (frac < 10) {
            put('0');
        }
        digits(frac);
        comma = true;
        return this;
    }

    JsonText field(String name, String v) {
        return name(name).value(v);
    }

    JsonText field(String name, long v) {
        return name(name).value(v);
    }

    private void separate() {
        if (comma) {
            put(',');
            comma = false;
        }
    }

    private void quoteCached(String s) {
        int home = System.identityHashCode(s) & (CACHED - 1);
        int free = -1;
        for (int i = 0; i < PROBES; i++) {
            int slot = (home + i) & (CACHED - 1);
            String cached = cachedString[slot];
            if (cached == s) {
                putAscii(cachedBytes[slot]);
                return;
            }
            if (cached == null && free < 0) {
                free = slot;
            }
        }
        int from = len;
        quote(s, 0, s.length(), false);
        if (s.length() <= MAX_CACHED_LENGTH) {
            // A full neighbourhood gives its home slot to the newcomer: values that change keep only a few slots.
            int slot = free >= 0 ? free : home;
            cachedString[slot] = s;
            cachedBytes[slot] = Arrays.copyOfRange(buf, from, len);
        }
    }

    private void quote(String s, int from, int to, boolean lower) {
        put('"');
        chars(s, from, to, lower);
        put('"');
    }

    private void chars(String s, int from, int to, boolean lower) {
        ensure((to - from) * 3);
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
                if (lower && c >= 'A' && c <= 'Z') {
                    c += 'a' - 'A';
                }
                buf[len++] = (byte) c;
                continue;
            }
            switch (c) {
                case '"' -> putAscii2('\\', '"');
                case '\\' -> putAscii2('\\', '\\');
                case '\n' -> putAscii2('\\', 'n');
                case '\r' -> putAscii2('\\', 'r');
                case '\t' -> putAscii2('\\', 't');
                default -> {
                    if (c < 0x20) {
                        ensure(6);
                        buf[len++] = '\\';
                        buf[len++] = 'u';
                        buf[len++] = '0';
                        buf[len++] = '0';
                        buf[len++] = HEX[c >> 4];
                        buf[len++] = HEX[c & 0xf];
                    } else if (Character.isSurrogate(c)) {
                        int cp = Character.codePointAt(s, i);
                        if (Character.isSupplementaryCodePoint(cp)) {
                            i++;
                            ensure(4);
                            buf[len++] = (byte) (0xf0 | (cp >> 18));
                            buf[len++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                            buf[len++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                            buf[len++] = (byte) (0x80 | (cp & 0x3f));
                        } else {
                            put('?'); // a lone surrogate has no UTF-8 form
                        }
                    } else if (c < 0x800) {
                        ensure(2);
                        buf[len++] = (byte) (0xc0 | (c >> 6));
                        buf[len++] = (byte) (0x80 | (c & 0x3f));
                    } else {
                        ensure(3);
                        buf[len++] = (byte) (0xe0 | (c >> 12));
                        buf[len++] = (byte) (0x80 | ((c >> 6) & 0x3f));
                        buf[len++] = (byte) (0x80 | (c & 0x3f));
                    }
                }
            }
        }
    }

    private void hex(long v) {
        ensure(16);
        for (int i = 15; i >= 0; i--) {
            buf[len + i] = HEX[(int) (v & 0xf)];
            v >>>= 4;
        }
        len += 16;
    }

    private void digits(long v) {
        if (v == Long.MIN_VALUE) {
            putAscii(Long.toString(v).getBytes(StandardCharsets.US_ASCII));
            return;
        }
        ensure(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        // The digit count from the bit length (log10(2) ~ 1233/4096), corrected by one comparison.
        int n = ((64 - Long.numberOfLeadingZeros(v | 1)) * 1233) >>> 12;
        n = v >= POWERS_OF_TEN[n] ? n + 1 : Math.max(n, 1);
        int at = len + n;
        while (v >= 100) {
            int r = (int) (v % 100);
            v /= 100;
            buf[--at] = PAIRS[2 * r + 1];
            buf[--at] = PAIRS[2 * r];
        }
        if (v >= 10) {
            buf[--at] = PAIRS[2 * (int) v + 1];
            buf[--at] = PAIRS[2 * (int) v];
        } else {
            buf[--at] = (byte) ('0' + v);
        }
        len += n;
    }

    private void put(char c) {
        ensure(1);
        buf[len++] = (byte) c;
    }

    private void putAscii2(char a, char b) {
        ensure(2);
        buf[len++] = (byte) a;
        buf[len++] = (byte) b;
    }

    private void putAscii(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }
}
