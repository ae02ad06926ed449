package dev.weft.protocol;

import java.util.Arrays;

/**
 * An ordered list of header fields carried by a request or response frame. Names are lower case (as in HTTP/2).
 * Kept as one flat array to avoid a map and an entry object per field on the hot path.
 *
 * <p>Not thread safe: a frame's headers are built and read by one thread at a time.
 */
public final class WmpHeaders {
    private static final String[] EMPTY = new String[0];
    private String[] fields;
    private int size;
    /** The decoder's spares this list goes back to when {@link #recycle}d; null for a list made by hand. */
    private Spares home;
    /**
     * Bit i: field i (i under 64) was vetted ({@link #markVetted}) and has not been replaced since; the bits move
     * with the fields when one is removed or inserted before them.
     */
    private long vetted;

    public WmpHeaders() {
        this.fields = EMPTY;
    }

    public WmpHeaders(int expectedFields) {
        this.fields = expectedFields == 0 ? EMPTY : new String[expectedFields * 2];
    }

    /** Appends a field. The name must already be lower case. */
    public WmpHeaders add(String name, String value) {
        if (size * 2 == fields.length) {
            fields = Arrays.copyOf(fields, Math.max(8, fields.length * 2));
        }
        fields[size * 2] = name;
        fields[size * 2 + 1] = value;
        size++;
        return this;
    }

    /** Puts a field at {@code index} (0..size); those from there move down one place. The name must be lower case. */
    public WmpHeaders insert(int index, String name, String value) {
        if (index < 0 || index > size) {
            throw new IndexOutOfBoundsException("header index " + index + " (size " + size + ")");
        }
        add(name, value);
        System.arraycopy(fields, index * 2, fields, index * 2 + 2, (size - 1 - index) * 2);
        fields[index * 2] = name;
        fields[index * 2 + 1] = value;
        vetted = (vetted & below(index)) | ((vetted & ~below(index)) << 1);
        return this;
    }

    public int size() {
        return size;
    }

    public String name(int index) {
        return fields[checkIndex(index) * 2];
    }

    public String value(int index) {
        return fields[checkIndex(index) * 2 + 1];
    }

    /** Replaces the value of the field at {@code index}, keeping its name and place (no longer vetted). */
    public void value(int index, String value) {
        fields[checkIndex(index) * 2 + 1] = value;
        vetted &= ~bit(index);
    }

    /**
     * Records that every field now in the list passed a receiver's allow-list for an HTTP/1.1 head (the WMP
     * boundary's: a lower-case token, field-content), so that a writer need not scan them again: {@link #vetted}
     * says so for each until it is replaced or the list is recycled. Fields added later are not vetted.
     */
    public void markVetted() {
        vetted = size >= Long.SIZE ? -1L : (1L << size) - 1;
    }

    /** Whether field {@code index} is one {@link #markVetted} covered and nothing has replaced since. */
    public boolean vetted(int index) {
        return (vetted & bit(index)) != 0;
    }

    /** Field {@code index}'s bit, or none for an index past the 64 that are tracked. */
    private static long bit(int index) {
        return index < Long.SIZE ? 1L << index : 0;
    }

    /** The bits of the fields before {@code index}. */
    private static long below(int index) {
        return index >= Long.SIZE ? -1L : (1L << index) - 1;
    }

    /**
     * Replaces every value of a field with one (appends it if absent): the first field of that name takes the value
     * where it stands, later ones are dropped. The name must be lower case.
     */
    public WmpHeaders set(String name, String value) {
        int first = indexOf(name);
        if (first < 0) {
            return add(name, value);
        }
        fields[first * 2 + 1] = value;
        vetted &= ~bit(first);
        removeFrom(first + 1, name);
        return this;
    }

    /** Removes every value of a field; the name must be lower case. */
    public WmpHeaders remove(String name) {
        int first = indexOf(name);
        if (first >= 0) {
            removeFrom(first, name);
        }
        return this;
    }

    /** Removes the field at {@code index}; those after it move up one place. */
    public WmpHeaders removeAt(int index) {
        checkIndex(index);
        System.arraycopy(fields, index * 2 + 2, fields, index * 2, (size - index - 1) * 2);
        vetted = (vetted & below(index)) | ((vetted >>> 1) & ~below(index));
        size--;
        fields[size * 2] = null;
        fields[size * 2 + 1] = null;
        return this;
    }

    /** Whether a field is present (the name lower case). */
    public boolean contains(String name) {
        return indexOf(name) >= 0;
    }

    /** Drops the fields named {@code name} at {@code from} and after, closing up the rest in order. */
    private void removeFrom(int from, String name) {
        int w = from;
        long kept = vetted & below(from);
        for (int i = from; i < size; i++) {
            if (!fields[i * 2].equals(name)) {
                fields[w * 2] = fields[i * 2];
                fields[w * 2 + 1] = fields[i * 2 + 1];
                if (vetted(i)) {
                    kept |= bit(w);
                }
                w++;
            }
        }
        vetted = kept;
        Arrays.fill(fields, w * 2, size * 2, null); // the list must not keep dropped values reachable
        size = w;
    }

    private int indexOf(String name) {
        for (int i = 0; i < size; i++) {
            if (fields[i * 2].equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /** First value of a field, or null. */
    public String get(String name) {
        int i = indexOf(name);
        return i < 0 ? null : fields[i * 2 + 1];
    }

    /**
     * The list's last reader is done with it: a list a decoder made ({@link Spares#take}) goes back to that decoder,
     * emptied, for a later head of the same connection. Nothing may read or keep it afterwards. Calling it again, or
     * on a list made by hand, does nothing.
     */
    public void recycle() {
        Spares h = home;
        if (h != null) {
            home = null;
            h.giveBack(this);
        }
    }

    /**
     * A decoder's emptied lists, handed out again instead of new ones: a connection's heads carry about the same
     * fields one after the other, so a list (and the array it grew to) serves head after head. Bounded: at most
     * {@code slots} lists wait here; more given back are left to the garbage collector.
     *
     * <p>Thread: the decoder's (its connection's event loop). A list given back from any other thread is not taken.
     */
    public static final class Spares {
        private final WmpHeaders[] free;
        private int count;
        /** The decoder's thread, known at its first list. */
        private Thread thread;

        public Spares(int slots) {
            this.free = new WmpHeaders[slots];
        }

        /** An empty list: a spare one, or a new one with room for {@code expectedFields}. */
        public WmpHeaders take(int expectedFields) {
            WmpHeaders h;
            if (count > 0) {
                h = free[--count];
                free[count] = null;
            } else {
                h = new WmpHeaders(expectedFields);
                if (thread == null) {
                    thread = Thread.currentThread();
                }
            }
            h.home = this;
            return h;
        }

        private void giveBack(WmpHeaders h) {
            if (count == free.length || Thread.currentThread() != thread) {
                return;
            }
            Arrays.fill(h.fields, 0, h.size * 2, null); // keeps no value of the old head reachable
            h.size = 0;
            h.vetted = 0;
            free[count++] = h;
        }
    }

    private int checkIndex(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("header index " + index + " (size " + size + ")");
        }
        return index;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof WmpHeaders other) || other.size != size) {
            return false;
        }
        return Arrays.equals(fields, 0, size * 2, other.fields, 0, size * 2);
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (int i = 0; i < size * 2; i++) {
            h = 31 * h + fields[i].hashCode();
        }
        return h;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < size; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(fields[i * 2]).append(": ").append(fields[i * 2 + 1]);
        }
        return sb.append('}').toString();
    }
}
