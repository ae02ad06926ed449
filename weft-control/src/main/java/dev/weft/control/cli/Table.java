package dev.weft.control.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table, two spaces between columns: numbers right-aligned, text (the first column and any named
 * with {@link #left}) left-aligned.
 */
final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final boolean[] left;

    Table(String... header) {
        rows.add(header);
        left = new boolean[header.length];
        left[0] = true;
    }

    /** Left-aligns these columns (0-based). */
    Table left(int... columns) {
        for (int c : columns) {
            left[c] = true;
        }
        return this;
    }

    void add(String... cells) {
        rows.add(cells);
    }

    String render() {
        int columns = rows.getFirst().length;
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i].codePointCount(0, r[i].length()));
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                int pad = width[i] - r[i].codePointCount(0, r[i].length());
                if (i > 0) {
                    sb.append("  ");
                }
                if (left[i]) {
                    sb.append(r[i]).append(i == columns - 1 ? "" : " ".repeat(pad));
                } else {
                    sb.append(" ".repeat(pad)).append(r[i]);
                }
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
