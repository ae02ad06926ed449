package dev.weft.protocol;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

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
 * charset. Entries are immutable Strings: nothing here refers to a buffer.
 *
 * <p>Why not one table with the data plane's {@code http.Decimals} (numbers written as recent Strings): a decoder has
 * bytes, not a number, and a table found by number would first have to parse them; and these values are one peer's,
 * so a table per connection keeps a busy peer's values from evicting another's, where the numbers a Worker writes
 * are the same whichever connection they go to.
 *
 * <p>Thread: its decoder's, the connection's event loop; one per decoder, not thread safe.
 */
public final class StringCache {
    /** A power of two: the slot is the hash's low bits. */
    static final int SLOTS = 64;
    static final int MAX_LENGTH = 64;

    private final Charset charset;
    /** Made on first use: a connection that never sends a field costs no table. */
    private String[] strings;

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
        int h = 0;
        for (int i = off; i < off + len; i++) {
            byte b = a[i];
            if (b < 0) {
                return new String(a, off, len, charset); // not ASCII: not kept
            }
            h = 31 * h + b; // String.hashCode of the same characters, which the String caches for the comparison
        }
        if (strings == null) {
            strings = new String[SLOTS];
        }
        int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
        String s = strings[slot];
        if (s != null && s.hashCode() == h && sameAscii(s, a, off, len)) {
            return s;
        }
        s = new String(a, off, len, StandardCharsets.ISO_8859_1); // ASCII: the same in any charset, and the fastest
        strings[slot] = s;
        return s;
    }

    private static boolean sameAscii(String s, byte[] a, int off, int len) {
        if (s.length() != len) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (s.charAt(i) != a[off + i]) {
                return false;
            }
        }
        return true;
    }
}
