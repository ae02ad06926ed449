package dev.weft.bench;

import java.util.List;
import java.util.Locale;

/**
 * The soak's chart: one panel per {@link SoakBench.Figure}, time in minutes across, one line per sidecar. Plain SVG
 * written here, so that the results folder holds a chart any browser shows, with nothing to install.
 */
final class SoakChart {
    private static final int PANEL_W = 460;
    private static final int PANEL_H = 220;
    private static final int LEFT = 70;
    private static final int TOP = 50;
    private static final int GAP = 70;
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

    private SoakChart() {}

    static String render(List<SoakBench.Reading> readings, String title) {
        SoakBench.Figure[] figures = SoakBench.Figure.values();
        List<String> sidecars = readings.stream().map(SoakBench.Reading::sidecar).distinct().toList();
        double maxMinutes = Math.max(1e-9, readings.stream().mapToDouble(r -> r.seconds() / 60).max().orElse(1));
        int width = LEFT + 2 * (PANEL_W + GAP);
        int height = TOP + 2 * (PANEL_H + GAP) + 20 * sidecars.size();
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n"
                + "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>%n", width, height, LEFT, escape(title)));
        for (int i = 0; i < figures.length; i++) {
            int x0 = LEFT + (i % 2) * (PANEL_W + GAP);
            int y0 = TOP + (i / 2) * (PANEL_H + GAP);
            panel(svg, figures[i], readings, sidecars, x0, y0, maxMinutes);
        }
        int legendY = TOP + 2 * (PANEL_H + GAP) - 20;
        for (int s = 0; s < sidecars.size(); s++) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                            + "stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">%s</text>%n", LEFT, legendY + 20 * s - 4,
                    LEFT + 24, legendY + 20 * s - 4, color(s), LEFT + 30, legendY + 20 * s, escape(sidecars.get(s))));
        }
        return svg.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder svg, SoakBench.Figure f, List<SoakBench.Reading> readings,
                              List<String> sidecars, int x0, int y0, double maxMinutes) {
        double max = readings.stream().mapToLong(f.value).max().orElse(1);
        double yMax = SvgChart.niceCeiling(Math.max(1, max * 1.1));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s%s</text>%n", x0, y0 - 12,
                escape(f.label), f.unit.isEmpty() ? "" : " (" + f.unit + ")"));
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#999\"/>%n", x0, y0, PANEL_W, PANEL_H));
        for (int t = 0; t <= 4; t++) {
            double v = yMax * t / 4;
            double y = y0 + PANEL_H - PANEL_H * t / 4.0;
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", x0 - 6,
                    y + 4, f.unit.equals("MiB") ? String.format(Locale.ROOT, "%.0f", v / (1 << 20))
                            : String.format(Locale.ROOT, "%.0f", v)));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f min</text>%n",
                x0 + PANEL_W, y0 + PANEL_H + 16, maxMinutes));
        for (int s = 0; s < sidecars.size(); s++) {
            StringBuilder points = new StringBuilder();
            for (SoakBench.Reading r : readings) {
                long v = f.value.applyAsLong(r);
                if (r.sidecar().equals(sidecars.get(s)) && v >= 0) {
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x0 + PANEL_W * (r.seconds() / 60) / maxMinutes,
                            y0 + PANEL_H - PANEL_H * v / yMax));
                }
            }
            svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                    + "points=\"%s\"/>%n", color(s), points.toString().strip()));
        }
    }

    private static String color(int i) {
        return COLORS[i % COLORS.length];
    }

    private static String escape(String s) {
        return SvgChart.escape(s);
    }
}
