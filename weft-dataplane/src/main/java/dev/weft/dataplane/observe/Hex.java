package dev.weft.dataplane.observe;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/** Lower-case hex for trace and span ids: written into a caller's bytes, and read without exceptions or allocation. */
final class Hex {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();
    private static final HexFormat HEX = HexFormat.of();

    private Hex() {}

    /** Writes {@code v} as 16 hex digits (ASCII bytes) at {@code at}. */
    static void write(long v, byte[] out, int at) {
        for (int i = 15; i >= 0; i--) {
            out[at + i] = (byte) DIGITS[(int) (v & 0xf)];
            v >>>= 4;
        }
    }

    /** 16 lower-case hex digits as a String (B3's multi headers, span encoding); a traceparent uses {@link #write}. */
    static String of(long v) {
        return HEX.toHexDigits(v);
    }

    /** A 128-bit id's 32 digits: one array and one String, where two Strings and their concatenation were three. */
    static String of(long hi, long lo) {
        byte[] c = new byte[32];
        write(hi, c, 0);
        write(lo, c, 16);
        return new String(c, StandardCharsets.ISO_8859_1);
    }

    /** Each Latin-1 char's hex value, or -1: a table, because random hex digits make a branch per char mispredict. */
    private static final byte[] VALUE = new byte[256];

    static {
        Arrays.fill(VALUE, (byte) -1);
        for (int i = 0; i < 10; i++) {
            VALUE['0' + i] = (byte) i;
        }
        for (int i = 0; i < 6; i++) {
            VALUE['a' + i] = (byte) (10 + i);
            VALUE['A' + i] = (byte) (10 + i);
        }
    }

    /**
     * Parses {@code len} (at most 16) hex digits of {@code s} from {@code from}. Returns {@code fallback} when any
     * is not a hex digit; callers pass a value that cannot be a valid id (ids are never 0) to detect that.
     */
    static long parse(CharSequence s, int from, int len, long fallback) {
        if (from < 0 || from + len > s.length()) {
            return fallback;
        }
        long v = 0;
        int bad = 0;
        // No early exit: a well-formed id, the usual case, is read whole anyway, and this way without a branch.
        for (int i = from; i < from + len; i++) {
            int d = digit(s.charAt(i));
            bad |= d;
            v = (v << 4) | (d & 0xf);
        }
        return bad < 0 ? fallback : v;
    }

    /** The value of 8 hex digits of {@code s} from {@code from} (which must be in range), or -1 if one is not. */
    static long parse8(CharSequence s, int from) {
        long v = 0;
        int bad = 0;
        for (int i = from; i < from + 8; i++) {
            int d = digit(s.charAt(i));
            bad |= d;
            v = (v << 4) | (d & 0xf);
        }
        return bad < 0 ? -1 : v;
    }

    static boolean isHex(CharSequence s, int from, int len) {
        if (from < 0 || from + len > s.length()) {
            return false;
        }
        int bad = 0;
        for (int i = from; i < from + len; i++) {
            bad |= digit(s.charAt(i));
        }
        return bad >= 0;
    }

    /** The digit's value, or -1 (also for any char beyond Latin-1). */
    private static int digit(char c) {
        return VALUE[c & 0xff] | ((0xff - c) >> 31);
    }
}
