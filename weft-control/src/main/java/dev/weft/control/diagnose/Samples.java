package dev.weft.control.diagnose;

import java.util.Arrays;

/** A growable list of µs values with exact quantiles (sorted on first read). Bounded by the span store's size. */
final class Samples {
    private long[] values = new long[16];
    private int size;
    private boolean sorted = true;

    void add(long v) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = v;
        sorted = false;
    }

    int size() {
        return size;
    }

    /** The q-quantile (nearest rank), or 0 when empty. */
    long quantile(double q) {
        if (size == 0) {
            return 0;
        }
        if (!sorted) {
            Arrays.sort(values, 0, size);
            sorted = true;
        }
        int rank = (int) Math.ceil(q * size);
        return values[Math.max(0, Math.min(size - 1, rank - 1))];
    }
}
