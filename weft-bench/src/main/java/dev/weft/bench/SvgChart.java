package dev.weft.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * The mesh chart as SVG text: two panels side by side, QPS and p99 latency by connections, one line per data plane
 * and proxy thread count (QPS also shows the ceiling, connections / 50 ms, dashed grey). When the planes ran at
 * several thread counts, each line is labelled {@code plane ×N}, and the lines of all but the lowest count are
 * dashed in the plane's colour. Plain SVG 1.1 with no script or external font, so it
 * renders the same on GitHub, in a browser or an image viewer.
 */
final class SvgChart {
    private static final int PANEL_W = 440;
    private static final int PANEL_H = 300;
    private static final int LEFT = 64;
    private static final int TOP = 48;
    private static final int GAP = 80;
    private static final int LEGEND_H = 60;
    private static final Map<String, String> COLORS = Map.of(
            "direct", "#7f7f7f", "weft", "#d62728", "weft-vt", "#ff9896", "weft-http1", "#9467bd",
            "nginx", "#2ca02c", "haproxy", "#1f77b4", "caddy", "#ff7f0e");

    private SvgChart() {}

    static String render(List<BenchRow> medians, String title) {
        List<Integer> counts = medians.stream().map(BenchRow::threads).filter(t -> t >= 0).distinct().sorted().toList();
        Map<String, List<BenchRow>> byPlane = new LinkedHashMap<>();
        for (BenchRow r : medians) {
            String line = counts.size() > 1 && r.threads() >= 0 ? r.plane() + " ×" + BenchRow.threadsLabel(r.threads())
                    : r.plane();
            byPlane.computeIfAbsent(line, p -> new ArrayList<>()).add(r);
        }
        List<Integer> xs = new ArrayList<>(new TreeSet<>(medians.stream().map(BenchRow::connections).toList()));
        int width = LEFT + PANEL_W + GAP + LEFT + PANEL_W + 24;
        int height = TOP + PANEL_H + 48 + LEGEND_H;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", width, height, width, height));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s</text>%n",
                LEFT, escape(title)));
        double qpsMax = Math.max(max(medians, BenchRow::qps), xs.getLast() / 0.05);
        panel(svg, LEFT, "QPS (dashed: ceiling = connections / 50 ms)", xs, qpsMax, byPlane, BenchRow::qps, true);
        panel(svg, LEFT + PANEL_W + GAP + LEFT, "p99 latency (ms)", xs, max(medians, BenchRow::p99Ms), byPlane,
                BenchRow::p99Ms, false);
        int lx = LEFT;
        int ly = TOP + PANEL_H + 48;
        for (Map.Entry<String, List<BenchRow>> e : byPlane.entrySet()) {
            String dash = dash(e.getValue(), counts);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                    + "stroke-width=\"3\"%s/>%n", lx, ly, lx + 24, ly, color(e.getValue().getFirst().plane()),
                    dash == null ? "" : " stroke-dasharray=\"" + dash + "\""));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", lx + 30, ly + 4,
                    escape(e.getKey())));
            lx += 120;
            if (lx > width - 120) {
                lx = LEFT;
                ly += 22;
            }
        }
        return svg.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder svg, int x0, String label, List<Integer> xs, double yMax,
                              Map<String, List<BenchRow>> byPlane, ToDoubleFunction<BenchRow> figure, boolean ceiling) {
        double top = niceCeiling(yMax);
        int y0 = TOP + PANEL_H;
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n", x0, TOP - 12,
                escape(label)));
        // Axes, grid and ticks.
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#333\"/>%n", x0, TOP, PANEL_W, PANEL_H));
        for (int i = 0; i <= 5; i++) {
            double v = top * i / 5;
            double y = y0 - PANEL_H * (v / top);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n",
                    x0, y, x0 + PANEL_W, y));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", x0 - 6,
                    y + 4, tick(v)));
        }
        for (int i = 0; i < xs.size(); i++) {
            double x = xAt(x0, i, xs.size());
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>%n", x,
                    y0 + 18, xs.get(i)));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">connections</text>%n",
                x0 + PANEL_W / 2, y0 + 36));
        if (ceiling) {
            svg.append(polyline(x0, xs, top, xs.stream().mapToDouble(c -> c / 0.05).toArray(), "#999", "6,4", false));
        }
        List<Integer> counts = byPlane.values().stream().flatMap(List::stream).map(BenchRow::threads)
                .filter(t -> t >= 0).distinct().sorted().toList();
        for (Map.Entry<String, List<BenchRow>> e : byPlane.entrySet()) {
            double[] ys = new double[xs.size()];
            for (int i = 0; i < xs.size(); i++) {
                int c = xs.get(i);
                ys[i] = e.getValue().stream().filter(r -> r.connections() == c).mapToDouble(figure).findFirst()
                        .orElse(Double.NaN);
            }
            svg.append(polyline(x0, xs, top, ys, color(e.getValue().getFirst().plane()), dash(e.getValue(), counts),
                    true));
        }
    }

    /** Dashes for the lines of all but the lowest thread count, so a plane's lines differ in more than the label. */
    private static String dash(List<BenchRow> line, List<Integer> counts) {
        int threads = line.getFirst().threads();
        return counts.size() > 1 && threads >= 0 && threads != counts.getFirst() ? "8,4" : null;
    }

    /** A line through the known points (a gap where a figure is unknown), with a dot on each when {@code dots}. */
    private static String polyline(int x0, List<Integer> xs, double top, double[] ys, String color, String dash,
                                   boolean dots) {
        StringBuilder out = new StringBuilder();
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < ys.length; i++) {
            if (Double.isNaN(ys[i])) {
                continue;
            }
            double x = xAt(x0, i, xs.size());
            double y = TOP + PANEL_H - PANEL_H * Math.min(1, ys[i] / top);
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            if (dots) {
                out.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>%n", x, y,
                        color));
            }
        }
        return String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                points.toString().trim(), color, dash == null ? "" : " stroke-dasharray=\"" + dash + "\"") + out;
    }

    private static double xAt(int x0, int i, int n) {
        return n == 1 ? x0 + PANEL_W / 2.0 : x0 + 30 + (PANEL_W - 60) * i / (double) (n - 1);
    }

    private static double max(List<BenchRow> rows, ToDoubleFunction<BenchRow> figure) {
        return rows.stream().mapToDouble(figure).filter(v -> !Double.isNaN(v)).max().orElse(1);
    }

    /** 1, 1.2, 1.5, 2, 2.5 or 5 times a power of ten, at or above {@code v}: round axis labels. */
    static double niceCeiling(double v) {
        if (v <= 0 || Double.isNaN(v)) {
            return 1;
        }
        double magnitude = Math.pow(10, Math.floor(Math.log10(v)));
        for (double step : new double[] {1, 1.2, 1.5, 2, 2.5, 5, 10}) {
            if (step * magnitude >= v) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String tick(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String color(String plane) {
        return COLORS.getOrDefault(plane, "#000");
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
