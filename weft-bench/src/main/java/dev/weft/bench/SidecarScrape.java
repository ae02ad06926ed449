package dev.weft.bench;

import dev.weft.control.cli.PromText;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code /metrics} samples of every sidecar of a service at one moment ({@link PromText}, the parser
 * {@code ./weft stat} uses), and their sums: a series is named by its metric and the labels that matter, and every
 * sample that has them counts, whichever sidecar served it.
 *
 * @param samples every sample of every sidecar scraped; empty when none answered (a scrape that timed out on a
 *                saturated machine is no reading)
 */
record SidecarScrape(List<PromText.Sample> samples) {

    SidecarScrape {
        samples = List.copyOf(samples);
    }

    boolean isEmpty() {
        return samples.isEmpty();
    }

    /**
     * The sum of the samples of {@code metric} that have every label given.
     *
     * @param labels alternating label names and values, e.g. {@code "upstream", "provider"}
     */
    double sum(String metric, String... labels) {
        double s = 0;
        for (PromText.Sample x : samples) {
            if (x.name().equals(metric) && hasLabels(x, labels)) {
                s += x.value();
            }
        }
        return s;
    }

    /** How much {@link #sum} rose from {@code before} to {@code after}. */
    static double delta(SidecarScrape before, SidecarScrape after, String metric, String... labels) {
        return after.sum(metric, labels) - before.sum(metric, labels);
    }

    /** The samples of {@code metric}, summed by their full label set. */
    Map<Map<String, String>, Double> series(String metric) {
        Map<Map<String, String>, Double> out = new HashMap<>();
        for (PromText.Sample x : samples) {
            if (x.name().equals(metric)) {
                out.merge(x.labels(), x.value(), Double::sum);
            }
        }
        return out;
    }

    private static boolean hasLabels(PromText.Sample x, String... labels) {
        for (int i = 0; i < labels.length; i += 2) {
            if (!labels[i + 1].equals(x.labels().get(labels[i]))) {
                return false;
            }
        }
        return true;
    }
}
