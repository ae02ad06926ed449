package dev.weft.dataplane.metrics;

import org.HdrHistogram.Histogram;

/**
 * Writes metrics in the Prometheus text exposition format (version 0.0.4).
 *
 * <p>A page is rendered every few seconds (the control plane reads every sidecar's every 5 s), too seldom for the
 * JIT to compile it early, so what it does per sample is kept plain: the histograms' bucket labels are made once,
 * and a label value is escaped only when it holds a character that needs it. Values that are not whole numbers are
 * written in full ({@link Double#toString}: the shortest decimal that reads back as the same double, which Prometheus
 * parses, exponent included). Six significant digits, as written before, made a histogram's {@code _sum} move in steps
 * of 10 s once it passed 10^6 seconds (a day at a few hundred requests a second of 50 ms), so its rate over a minute
 * read as zero or as a jump.
 */
public final class PrometheusText {
    private static final double[] BUCKETS_SECONDS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    private static final String[] BUCKET_LABELS = new String[BUCKETS_SECONDS.length];

    static {
        for (int i = 0; i < BUCKETS_SECONDS.length; i++) {
            BUCKET_LABELS[i] = Double.toString(BUCKETS_SECONDS[i]);
        }
    }

    private final StringBuilder sb = new StringBuilder(4096);
    private String lastHeader;

    public PrometheusText header(String name, String type, String help) {
        if (!name.equals(lastHeader)) {
            sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
            sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
            lastHeader = name;
        }
        return this;
    }

    /** @param labels alternating label names and values */
    public PrometheusText sample(String name, double value, String... labels) {
        sb.append(name);
        if (labels.length > 0) {
            sb.append('{');
            for (int i = 0; i < labels.length; i += 2) {
                if (i > 0) {
                    sb.append(',');
                }
                sb.append(labels[i]).append("=\"").append(escape(labels[i + 1])).append('"');
            }
            sb.append('}');
        }
        sb.append(' ');
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            sb.append((long) value);
        } else if (Double.isNaN(value)) {
            sb.append("NaN");
        } else if (Double.isInfinite(value)) {
            sb.append(value > 0 ? "+Inf" : "-Inf"); // the exposition format's spelling, not Java's "Infinity"
        } else {
            sb.append(value);
        }
        sb.append('\n');
        return this;
    }

    public PrometheusText counter(String name, String help, double value, String... labels) {
        return header(name, "counter", help).sample(name, value, labels);
    }

    public PrometheusText gauge(String name, String help, double value, String... labels) {
        return header(name, "gauge", help).sample(name, value, labels);
    }

    /** A histogram in seconds from an HdrHistogram of microseconds, with fixed buckets. */
    public PrometheusText histogram(String name, String help, Histogram micros, String... labels) {
        header(name, "histogram", help);
        Histogram h = micros.copy();
        for (int i = 0; i < BUCKETS_SECONDS.length; i++) {
            long count = countAtOrBelow(h, (long) (BUCKETS_SECONDS[i] * 1_000_000));
            sample(name + "_bucket", count, with(labels, "le", BUCKET_LABELS[i]));
        }
        sample(name + "_bucket", h.getTotalCount(), with(labels, "le", "+Inf"));
        sample(name + "_sum", h.getMean() * h.getTotalCount() / 1_000_000.0, labels);
        sample(name + "_count", h.getTotalCount(), labels);
        return this;
    }

    /**
     * A histogram in seconds from a {@link LatencyHistogram}. Reads each bucket once, so a concurrent increment can
     * make {@code _count} differ from {@code +Inf} by a request at most; Prometheus tolerates that.
     */
    public PrometheusText histogram(String name, String help, LatencyHistogram h, String... labels) {
        return histogram(name, help, h.counts(), h.sumMicros(), labels);
    }

    /**
     * A histogram in seconds from counts per {@link LatencyHistogram#BOUNDS_MICROS} bucket (not cumulative; the last
     * above every bound) and the sum of the observations in µs.
     */
    public PrometheusText histogram(String name, String help, long[] counts, long sumMicros, String... labels) {
        header(name, "histogram", help);
        long cumulative = 0;
        for (int i = 0; i < LatencyHistogram.LE.length; i++) {
            cumulative += counts[i];
            sample(name + "_bucket", cumulative, with(labels, "le", LatencyHistogram.LE[i]));
        }
        cumulative += counts[counts.length - 1];
        sample(name + "_bucket", cumulative, with(labels, "le", "+Inf"));
        sample(name + "_sum", sumMicros / 1_000_000.0, labels);
        sample(name + "_count", cumulative, labels);
        return this;
    }

    private static long countAtOrBelow(Histogram h, long value) {
        return h.getTotalCount() == 0 ? 0 : h.getCountBetweenValues(0, value);
    }

    private static String[] with(String[] labels, String k, String v) {
        String[] out = java.util.Arrays.copyOf(labels, labels.length + 2);
        out[labels.length] = k;
        out[labels.length + 1] = v;
        return out;
    }

    private static String escape(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' || c == '"' || c == '\n') {
                return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
            }
        }
        return s;
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
