package dev.weft.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The resilience scenarios' figures as Markdown and CSV: a table per scenario, then each scenario's time line. */
final class ResilienceReport {
    private ResilienceReport() {}

    /**
     * Writes {@code BASE.md} and {@code BASE.csv} into {@code dir}; returns the Markdown.
     *
     * @param summaries each scenario's time line, rendered, in the order the scenarios ran
     */
    static String write(Path dir, String base, String conditions, List<ResilienceBench.Figure> figures,
                        Map<String, String> summaries) throws IOException {
        Files.createDirectories(dir);
        StringBuilder md = new StringBuilder("# Resilience scenarios\n\n").append(conditions).append("\n\n");
        StringBuilder csv = new StringBuilder("scenario,metric,value,unit,note\n");
        String current = null;
        for (ResilienceBench.Figure f : figures) {
            if (!f.scenario().equals(current)) {
                current = f.scenario();
                md.append("\n## ").append(current).append("\n\n| metric | value | note |\n|---|---|---|\n");
            }
            md.append("| ").append(f.metric()).append(" | ").append(format(f.value())).append(f.unit().isEmpty() ? ""
                    : " " + f.unit()).append(" | ").append(f.note()).append(" |\n");
            csv.append(csvField(f.scenario())).append(',').append(csvField(f.metric())).append(',')
                    .append(format(f.value())).append(',').append(csvField(f.unit())).append(',')
                    .append(csvField(f.note())).append('\n');
        }
        if (!summaries.isEmpty()) {
            md.append("\n## Time lines (one line a second after the warm-up: ok/s, errors/s, p99 ms)\n");
            summaries.forEach((k, v) -> md.append("\n### ").append(k).append("\n\n```\n").append(v).append("```\n"));
        }
        Files.writeString(dir.resolve(base + ".md"), md);
        Files.writeString(dir.resolve(base + ".csv"), csv);
        return md.toString();
    }

    /** A figure as the tables show it: whole numbers without decimals, others with two; NaN as n/a. */
    static String format(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        return v == Math.rint(v) && Math.abs(v) < 1e12 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String csvField(String s) {
        return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
