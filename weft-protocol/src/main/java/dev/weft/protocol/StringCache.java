package dev.weft.protocol;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The Strings a connection's decoder made last, found again by their bytes. A peer sends the same header values on
 * request after request (Host and the authority, the path, Via, X-Forwarded-For, the caller's name, a Content-Type or
 * Content-Length outside the static tables), so a decoder asks here before it makes a String: a value seen recently
 * on the same connection costs no allocation. Values that differ per request (trace ids, most deadlines) still cost
 * one String each.
 *
 * <p>Bounded, whatever the input: {@link #SLOTS} entries, each a String of at most {@link #MAX_LENGTH} ASCII
 * characters, placed by hash (a new String replaces the one in its slot), so random values only evict. Only ASCII is
 * kept, where every charset a decoder uses agrees byte for byte; other bytes get a new String in the decoder's
 * charset. Entries are immutable Strings, kept beside a copy of their bytes: nothing here refers to a buffer.
 *
 * <p>Why a hash of a few words and a copy of the bytes: this was the data plane's hottest method of its own in the
 * mesh at 512 connections (perf, 1.6-1.8 µs per request per side, docs/benchmarks.md, session 22) when it hashed
 * every byte as {@code String.hashCode} does (a multiply chained through each byte) and compared them one
 * {@code charAt} at a time. The slot now comes from the length and the first, middle and last eight bytes, and the
 * bytes are compared with {@link Arrays#equals(byte[], int, int, byte[], int, int)}, which the JIT vectorizes; values
 * that differ only elsewhere share a slot and evict each other, which costs what a miss costs, one String.
 *
 * <p>Why not one table with the data plane's {@code http.Decimals} (numbers written as recent Strings): a decoder has
 * bytes, not a number, and a table found by number would first have to parse them; and these values are one peer's,
 * so a table per connection keeps a busy peer's values from evicting another's, where the numbers a Worker writes
 * are the same whichever connection they go to.
 *
 * <p>Thread: its decoder's, the connection's event loop; one per decoder, not thread safe.
 */
public final class StringCache {
    /** A power of two: the slot is the hash's top bits. */
    static final int SLOTS = 64;
    static final int MAX_LENGTH = 64;
    private static final int SLOT_SHIFT = Long.SIZE - Integer.numberOfTrailingZeros(SLOTS);
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ASCII_MASK = 0x8080808080808080L;

    private final Charset charset;
    /** Made on first use: a connection that never sends a field costs no table. */
    private String[] strings;
    /** Each slot's String as bytes ({@link #MAX_LENGTH} each, made when the slot is first used) and its length. */
    private byte[][] keys;
    private int[] lengths;

    /** @param charset how the decoder reads bytes that are not ASCII (UTF-8 for WMP, ISO-8859-1 for HTTP/1.1) */
    public StringCache(Charset charset) {
        this.charset = charset;
    }

    /** {@code a[off, off+len)} as a String: the one made before when these bytes came recently, else a new one. */
    public String get(byte[] a, int off, int len) {
        if (len == 0) {
            return "";
        }
        if (len > MAX_LENGTH) {
            return new String(a, off, len, charset);
        }
        if (strings == null) {
            strings = new String[SLOTS];
            keys = new byte[SLOTS][];
            lengths = new int[SLOTS];
        }
        int slot = slot(a, off, len);
        byte[] key = keys[slot];
        if (key != null && lengths[slot] == len && Arrays.equals(key, 0, len, a, off, off + len)) {
            return strings[slot];
        }
        if (!ascii(a, off, len)) {
            return new String(a, off, len, charset); // not ASCII: not kept
        }
        String s = new String(a, off, len, StandardCharsets.ISO_8859_1); // ASCII: the same in any charset, and the fastest
        if (key == null) {
            key = keys[slot] = new byte[MAX_LENGTH];
        }
        System.arraycopy(a, off, key, 0, len);
        lengths[slot] = len;
        strings[slot] = s;
        return s;
    }

    /** The slot of {@code a[off, off+len)}: its length and first, middle and last eight bytes (or every byte, if fewer). */
    private static int slot(byte[] a, int off, int len) {
        long h;
        if (len >= Long.BYTES) {
            h = (long) LONGS.get(a, off) * 0x9E3779B97F4A7C15L
                    + (long) LONGS.get(a, off + (len >>> 1) - Long.BYTES / 2) * 0xC2B2AE3D27D4EB4FL
                    + (long) LONGS.get(a, off + len - Long.BYTES);
        } else {
            h = 0;
            for (int i = off; i < off + len; i++) {
                h = (h << 8) | (a[i] & 0xFF);
            }
        }
        return (int) (((h + len) * 0x9E3779B97F4A7C15L) >>> SLOT_SHIFT);
    }

    private static boolean ascii(byte[] a, int off, int len) {
        int i = off;
        int end = off + len;
        for (; i + Long.BYTES <= end; i += Long.BYTES) {
            if (((long) LONGS.get(a, i) & ASCII_MASK) != 0) {
                return false;
            }
        }
        for (; i < end; i++) {
            if (a[i] < 0) {
                return false;
            }
        }
        return true;
    }
}
