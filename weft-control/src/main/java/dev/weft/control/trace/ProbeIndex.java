package dev.weft.control.trace;

import java.util.Arrays;

/**
 * An open-addressing (linear probing) index of small int ids, for the span store's tables: it holds no keys, only
 * ids, and asks {@link #hashOf} for an id's hash, so a table keeps its keys in its own primitive arrays. Removal
 * shifts entries back rather than leaving tombstones, so a table that turns over all day never degrades.
 *
 * <p>Lookups are written by the owner: {@code for (int s = home(h); index[s] != 0; s = next(s))}, comparing the
 * key of id {@code index[s] - 1}. Not thread safe (the store's single thread).
 */
abstract class ProbeIndex {
    /** id + 1, 0 for an empty slot. */
    int[] index;
    private int mask;
    private int size;

    ProbeIndex(int expected) {
        int n = Integer.highestOneBit(Math.max(8, expected * 2 - 1)) << 1;
        index = new int[n];
        mask = n - 1;
    }

    abstract int hashOf(int id);

    static int mix(long h) {
        h *= 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    final int home(int hash) {
        return hash & mask;
    }

    final int next(int slot) {
        return (slot + 1) & mask;
    }

    final void insert(int id) {
        if ((size + 1) * 2 > index.length) {
            int[] old = index;
            index = new int[old.length * 2];
            mask = index.length - 1;
            for (int e : old) {
                if (e != 0) {
                    place(e);
                }
            }
        }
        place(id + 1);
        size++;
    }

    private void place(int entry) {
        int s = home(hashOf(entry - 1));
        while (index[s] != 0) {
            s = next(s);
        }
        index[s] = entry;
    }

    final void remove(int id) {
        int i = home(hashOf(id));
        while (index[i] != id + 1) {
            if (index[i] == 0) {
                throw new IllegalStateException("id " + id + " is not in the index");
            }
            i = next(i);
        }
        index[i] = 0;
        size--;
        // Backward shift: move up each later entry of the run whose home is not between the hole and itself.
        for (int j = next(i); index[j] != 0; j = next(j)) {
            int k = home(hashOf(index[j] - 1));
            boolean stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
            if (!stays) {
                index[i] = index[j];
                index[j] = 0;
                i = j;
            }
        }
    }

    final void clear() {
        Arrays.fill(index, 0);
        size = 0;
    }
}
