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
 * @param figures   the proxies' and the machine's figures over the measured window
 */
public record ExperimentResult(LoadResult load, List<ProviderShare> providers, Path runDir, boolean logsKept,
                               Figures figures) {

    /**
     * What the proxies and the machine did during the measured window (from /proc and the kernel's socket
     * counters; see {@link ProcStats} and {@link LinkBytes}).
     *
     * @param proxies           every proxy process tree, provider side first; empty for direct
     * @param machineBusy       busy share of all the machine's cores (0..1), NaN when unknown
     * @param loadAverage       the machine's 1-minute load average as the window began
     * @param linkBytesRequests bytes the provider-side proxies received on the link from the consumer side;
     *                          -1 when unknown
     * @param linkBytesAnswers  bytes they sent back on it; -1 when unknown
     * @param linkClosed        link connections that closed inside the window (their bytes are missing)
     * @param controlCpu        CPU of the control plane over the window (it stores the sidecars' spans); null
     *                          without one
     * @param appsCpu           CPU of the example apps over the window (providers and consumer, the same work for
     *                          every data plane); null when unknown
     * @param tlsHandshakes     TLS handshakes Weft's sidecars counted on the mesh link over the window, both ends
     *                          of each counting it ({@code weft_tls_handshakes_total}); NaN for proxies that export
     *                          no such counter (the peers, or sidecars with metrics off)
     */
    public record Figures(List<ProxyFigure> proxies, double machineBusy, double loadAverage, long linkBytesRequests,
                          long linkBytesAnswers, int linkClosed, java.time.Duration controlCpu, java.time.Duration appsCpu,
                          double tlsHandshakes) {
        public Figures {
            proxies = List.copyOf(proxies);
        }

        /** CPU time of all proxies together. */
        public java.time.Duration proxyCpu() {
            return proxies.stream().map(ProxyFigure::cpu).reduce(java.time.Duration.ZERO, java.time.Duration::plus);
        }

        /** The part of {@link #proxyCpu()} that the proxies' JIT compilers used (zero for native proxies). */
        public java.time.Duration proxyJitCpu() {
            return proxies.stream().map(ProxyFigure::jitCpu).reduce(java.time.Duration.ZERO, java.time.Duration::plus);
        }

        public boolean linkKnown() {
            return linkBytesRequests >= 0 && linkBytesAnswers >= 0;
        }
    }

    /**
     * @param consumerSide  whether this is the consumer-side proxy (else a provider-side one)
     * @param cpu           user + system CPU of its process tree during the window
     * @param jitCpu        the part of {@code cpu} spent by JIT compiler threads (zero for native proxies)
     * @param peakRssBytes  peak resident memory since it started (VmHWM, summed over its processes)
     * @param ready         from process start to ready
     */
    public record ProxyFigure(String name, boolean consumerSide, long pid, java.time.Duration cpu,
                              java.time.Duration jitCpu, long peakRssBytes, java.time.Duration ready) {}

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
