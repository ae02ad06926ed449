package dev.weft.dataplane.http;

import io.netty.util.concurrent.FastThreadLocal;

/**
 * Numbers as decimal Strings for header values ({@code content-length}, {@code x-weft-deadline-ms}), found again when
 * the same number came recently on the same thread. A sidecar writes the same few numbers request after request (a
 * service's usual body sizes; the deadline budget left, which moves by a millisecond at most on a fast hop), and
 * {@code Long.toString} made a String and its array each time: two per request on each hop (JFR).
 *
 * <p>Bounded: {@link #SLOTS} numbers per thread, placed by value (a new number replaces the one in its slot), so a
 * number that differs every time only evicts. Entries are immutable Strings.
 *
 * <p>Why not {@code dev.weft.protocol.StringCache}, the decoders' recent Strings: that one is found by bytes, and a
 * number has none until its digits are written out and hashed, most of what {@code Long.toString} costs; here a hit
 * is one {@code long} compared. And these numbers are made by writers (a phase, an upstream call) that hold no
 * decoder, so the table is the thread's, not a connection's.
 *
 * <p>Thread: any; each thread has its own table (an indexed slot on Netty's Worker threads). No buffers.
 */
public final class Decimals {
    /** A power of two: the slot is the value's low bits, mixed. */
    static final int SLOTS = 64;

    private static final FastThreadLocal<Decimals> TABLE = new FastThreadLocal<>() {
        @Override
        protected Decimals initialValue() {
            return new Decimals();
        }
    };

    private final long[] numbers = new long[SLOTS];
    private final String[] strings = new String[SLOTS];

    private Decimals() {
    }

    /** {@code value} in decimal, as {@link Long#toString(long)} writes it. */
    public static String of(long value) {
        return TABLE.get().string(value);
    }

    private String string(long value) {
        int slot = (int) (value ^ (value >>> 7) ^ (value >>> 32)) & (SLOTS - 1);
        String s = strings[slot];
        if (s != null && numbers[slot] == value) {
            return s;
        }
        s = Long.toString(value);
        numbers[slot] = value;
        strings[slot] = s;
        return s;
    }
}
