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

    public int size() {
        return size;
    }

    public String name(int index) {
        return fields[checkIndex(index) * 2];
    }

    public String value(int index) {
        return fields[checkIndex(index) * 2 + 1];
    }

    /** Replaces every value of a field with one (appends it if absent). The name must be lower case. */
    public WmpHeaders set(String name, String value) {
        int w = 0;
        boolean replaced = false;
        for (int i = 0; i < size; i++) {
            if (fields[i * 2].equals(name)) {
                if (replaced) {
                    continue; // drop later duplicates
                }
                replaced = true;
                fields[w * 2] = name;
                fields[w * 2 + 1] = value;
            } else if (w != i) {
                fields[w * 2] = fields[i * 2];
                fields[w * 2 + 1] = fields[i * 2 + 1];
            }
            w++;
        }
        for (int i = w; i < size; i++) {
            fields[i * 2] = null;
            fields[i * 2 + 1] = null;
        }
        size = w;
        return replaced ? this : add(name, value);
    }

    /** Removes every value of a field; the name must be lower case. */
    public WmpHeaders remove(String name) {
        int w = 0;
        for (int i = 0; i < size; i++) {
            if (!fields[i * 2].equals(name)) {
                fields[w * 2] = fields[i * 2];
                fields[w * 2 + 1] = fields[i * 2 + 1];
                w++;
            }
        }
        for (int i = w; i < size; i++) {
            fields[i * 2] = null;
            fields[i * 2 + 1] = null;
        }
        size = w;
        return this;
    }

    /** First value of a field, or null. */
    public String get(String name) {
        for (int i = 0; i < size; i++) {
            if (fields[i * 2].equals(name)) {
                return fields[i * 2 + 1];
            }
        }
        return null;
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
