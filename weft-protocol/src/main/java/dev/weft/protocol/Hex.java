package dev.weft.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Lower-case hex for trace and span ids, the one table both the WMP codec ({@link Traceparent}) and the sidecar's
 * trace propagation read and write them with. Only lower case is a digit here: W3C Trace Context and B3 both define
 * their ids as lower-case hex, and a context with an upper-case digit is ignored whole (the sidecar then starts a
 * trace), where Brave and OpenTelemetry do the same.
 *
 * <p>Reads are branch-free per digit and never throw or allocate: ids are random, so a branch per digit would
 * mispredict. Thread: any; stateless.
 */
public final class Hex {
    static final byte[] DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final HexFormat FORMAT = HexFormat.of();
    /** Each byte's value as a lower-case hex digit, or -1. */
    private static final byte[] VALUE = new byte[256];

    static {
        Arrays.fill(VALUE, (byte) -1);
        for (int i = 0; i < 16; i++) {
            VALUE[DIGITS[i]] = (byte) i;
        }
    }

    private Hex() {}

    /** The value of {@code b} (a byte read from a buffer, any sign) as a lower-case hex digit, or -1. */
    static int value(int b) {
        return VALUE[b & 0xFF];
    }

    /** The value of {@code c} as a lower-case hex digit, or -1 (also for any char beyond Latin-1). */
    private static int value(char c) {
        return VALUE[c & 0xFF] | ((0xFF - c) >> 31);
    }

    /** The 8 hex digits packed in {@code word} (as {@code ByteBuf.getLong} reads them, first digit highest), or -1. */
    static long parse8(long word) {
        long v = 0;
        int bad = 0;
        for (int shift = 56; shift >= 0; shift -= 8) {
            int d = VALUE[(int) (word >>> shift) & 0xFF];
            bad |= d;
            v = v << 4 | (d & 0xF);
        }
        return bad < 0 ? -1 : v;
    }

    /** The value of 8 hex digits of {@code s} from {@code from} (which must be in range), or -1 if one is not. */
    public static long parse8(CharSequence s, int from) {
        long v = 0;
        int bad = 0;
        for (int i = from; i < from + 8; i++) {
            int d = value(s.charAt(i));
            bad |= d;
            v = v << 4 | (d & 0xF);
        }
        return bad < 0 ? -1 : v;
    }

    /**
     * The value of {@code len} (at most 16) hex digits of {@code s} from {@code from}, or {@code fallback} when one
     * is not a digit or the range is outside {@code s}; callers pass a value no valid id has (ids are never 0).
     */
    public static long parse(CharSequence s, int from, int len, long fallback) {
        if (from < 0 || len < 0 || len > 16 || from > s.length() - len) {
            return fallback;
        }
        long v = 0;
        int bad = 0;
        // No early exit: a well-formed id, the usual case, is read whole anyway, and this way without a branch.
        for (int i = from; i < from + len; i++) {
            int d = value(s.charAt(i));
            bad |= d;
            v = v << 4 | (d & 0xF);
        }
        return bad < 0 ? fallback : v;
    }

    /** Whether the {@code len} chars of {@code s} from {@code from} are all lower-case hex digits (and in range). */
    public static boolean isHex(CharSequence s, int from, int len) {
        if (from < 0 || len < 0 || from > s.length() - len) {
            return false;
        }
        int bad = 0;
        for (int i = from; i < from + len; i++) {
            bad |= value(s.charAt(i));
        }
        return bad >= 0;
    }

    /** Writes {@code v} as 16 hex digits (ASCII bytes) at {@code at}. */
    public static void write(long v, byte[] out, int at) {
        for (int i = 15; i >= 0; i--) {
            out[at + i] = DIGITS[(int) (v & 0xF)];
            v >>>= 4;
        }
    }

    /** The 8 hex digits of {@code v} as the 8 ASCII bytes of a long, first digit highest: one {@code setLong}. */
    static long digits8(int v) {
        long r = 0;
        for (int shift = 28; shift >= 0; shift -= 4) {
            r = (r << 8) | DIGITS[(v >>> shift) & 0xF];
        }
        return r;
    }

    /** 16 hex digits as a String (B3's multi headers, span encoding). */
    public static String of(long v) {
        return FORMAT.toHexDigits(v);
    }

    /** A 128-bit id's 32 digits: one array and one String, where two Strings and their concatenation were three. */
    public static String of(long hi, long lo) {
        byte[] c = new byte[32];
        write(hi, c, 0);
        write(lo, c, 16);
        return new String(c, StandardCharsets.ISO_8859_1);
    }
}
