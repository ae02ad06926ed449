package dev.weft.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * What one run of the paper's experiment measured.
 *
 * @param load      the load generator's result against the consumer
 * @param providers each provider's share of the requests served during the measured window, next to its weight
 * @param runDir    where the processes' logs were written
 * @param logsKept  whether {@code runDir} still exists (it is deleted after a clean run unless asked to keep it)
 */
public record ExperimentResult(LoadResult load, List<ProviderShare> providers, Path runDir, boolean logsKept) {

    /**
     * @param served      answers the provider sent during the measured window (from its {@code /stats}), or -1 if
     *                    its stats could not be read
     * @param share       {@code served} over all providers' served; NaN if unknown
     * @param weightShare {@code weight} over the sum of weights: the share a weighted balancer aims for
     */
    public record ProviderShare(String name, int weight, long served, double share, double weightShare) {}

    public String describe() {
        StringBuilder out = new StringBuilder("Weft demo results (load generator -> consumer -> sidecar -> sidecar -> "
                + providers.size() + " providers)").append(System.lineSeparator());
        out.append(load.describe());
        out.append(String.format(Locale.ROOT, "  providers      %-8s %10s %8s %14s%n", "name", "served", "share",
                "weight share"));
        for (ProviderShare p : providers) {
            String share = Double.isNaN(p.share()) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", p.share() * 100);
            String served = p.served() < 0 ? "n/a" : Long.toString(p.served());
            out.append(String.format(Locale.ROOT, "                 %-8s %10s %8s %8.1f%% (%d)%n", p.name(), served,
                    share, p.weightShare() * 100, p.weight()));
        }
        out.append("  logs           ").append(logsKept ? runDir.toString() : "deleted (use --keep-logs to keep them)")
                .append(System.lineSeparator());
        return out.toString();
    }
}
