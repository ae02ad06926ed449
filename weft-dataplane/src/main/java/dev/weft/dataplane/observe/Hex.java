package dev.weft.dataplane.observe;

/** Lower-case hex for trace and span ids, without the allocations of Long.toHexString/parseUnsignedLong. */
final class Hex {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    private Hex() {}

    /** Writes {@code v} as 16 hex digits at {@code at}. */
    static void write(long v, char[] out, int at) {
        for (int i = 15; i >= 0; i--) {
            out[at + i] = DIGITS[(int) (v & 0xf)];
            v >>>= 4;
        }
    }

    /** Writes {@code v} as 16 hex digits (ASCII bytes) at {@code at}. */
    static void write(long v, byte[] out, int at) {
        for (int i = 15; i >= 0; i--) {
            out[at + i] = (byte) DIGITS[(int) (v & 0xf)];
            v >>>= 4;
        }
    }

    static String of(long v) {
        char[] c = new char[16];
        write(v, c, 0);
        return new String(c);
    }

    static String of(long hi, long lo) {
        char[] c = new char[32];
        write(hi, c, 0);
        write(lo, c, 16);
        return new String(c);
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
        for (int i = from; i < from + len; i++) {
            int d = digit(s.charAt(i));
            if (d < 0) {
                return fallback;
            }
            v = (v << 4) | d;
        }
        return v;
    }

    static boolean isHex(CharSequence s, int from, int len) {
        if (from < 0 || from + len > s.length()) {
            return false;
        }
        for (int i = from; i < from + len; i++) {
            if (digit(s.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    private static int digit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
