package dev.weft.control.trace;

import java.util.Arrays;

/**
 * The distinct names spans carry (span names, kinds, service names), each kept once and referred to by an int id.
 * A mesh has few of them, so a stored span holds four ints instead of four Strings. Reference counted: a name goes
 * when the last span using it is evicted, so arbitrary names (an app that puts ids in its span names) cannot grow the
 * table beyond what the store holds. Names are looked up from the parser's char buffer without making a String;
 * only a name seen for the first time is copied into one.
 *
 * <p>Not thread safe: the store's single thread.
 */
final class NameTable {
    private String[] names = new String[64];
    private int[] hashes = new int[64];
    private int[] refs = new int[64];
    private int[] free = new int[64];
    private int freeCount;
    private int nextId;
    private final ProbeIndex index = new ProbeIndex(64) {
        @Override
        int hashOf(int id) {
            return hashes[id];
        }
    };

    /** The id of the name in {@code chars[off, off+len)} (lower-cased first if asked), with one more reference. */
    int retain(char[] chars, int off, int len, boolean lower) {
        int h = 0;
        for (int i = 0; i < len; i++) {
            h = 31 * h + (lower ? Character.toLowerCase(chars[off + i]) : chars[off + i]);
        }
        h = ProbeIndex.mix(h);
        for (int s = index.home(h); index.index[s] != 0; s = index.next(s)) {
            int id = index.index[s] - 1;
            if (hashes[id] == h && sameChars(names[id], chars, off, len, lower)) {
                refs[id]++;
                return id;
            }
        }
        char[] copy = Arrays.copyOfRange(chars, off, off + len);
        if (lower) {
            for (int i = 0; i < len; i++) {
                copy[i] = Character.toLowerCase(copy[i]); // as the hash above, char by char
            }
        }
        return add(new String(copy), h);
    }

    /** The id of {@code name}, or -1 when no stored span uses it. */
    int find(String name) {
        int h = ProbeIndex.mix(name.hashCode());
        for (int s = index.home(h); index.index[s] != 0; s = index.next(s)) {
            int id = index.index[s] - 1;
            if (hashes[id] == h && names[id].equals(name)) {
                return id;
            }
        }
        return -1;
    }

    void retain(int id) {
        if (id >= 0) {
            refs[id]++;
        }
    }

    void release(int id) {
        if (id >= 0 && --refs[id] == 0) {
            index.remove(id);
            names[id] = null;
            free[freeCount++] = id;
        }
    }

    /** The name of an id, or null for -1 (absent). */
    String name(int id) {
        return id < 0 ? null : names[id];
    }

    int size() {
        return nextId - freeCount;
    }

    private int add(String name, int h) {
        int id;
        if (freeCount > 0) {
            id = free[--freeCount];
        } else {
            if (nextId == names.length) {
                int n = names.length * 2;
                names = Arrays.copyOf(names, n);
                hashes = Arrays.copyOf(hashes, n);
                refs = Arrays.copyOf(refs, n);
                free = Arrays.copyOf(free, n);
            }
            id = nextId++;
        }
        names[id] = name;
        hashes[id] = h;
        refs[id] = 1;
        index.insert(id);
        return id;
    }

    /** Whether {@code name} equals the chars; it has the same hash, so this is nearly always true. */
    private static boolean sameChars(String name, char[] chars, int off, int len, boolean lower) {
        if (name.length() != len) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            char c = chars[off + i];
            if (name.charAt(i) != (lower ? Character.toLowerCase(c) : c)) {
                return false;
            }
        }
        return true;
    }
}
