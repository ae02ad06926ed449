package dev.weft.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The figures of one measured load (one section, data plane, round and connection count), as numbers ready for
 * tables. NaN means "does not apply or unknown" (e.g. proxy CPU for {@code direct}); {@code error} is set instead
 * of the figures when the topology could not be started or measured.
 *
 * @param section           mesh or hop
 * @param threads           each proxy's threads ({@link DataPlane#threads()}): 0 for the proxies' own default, -1
 *                          without proxies
 * @param requests          answers and failures in the measured window
 * @param errors            failed requests (wrong status or body, connection, timeout)
 * @param proxyCpuUsPerReq  CPU of all the proxies' processes over the window, per request
 * @param jitCpuUsPerReq    the part of it their JIT compilers used (0 for native proxies): a JVM's one-time cost
 *                          that a long-running sidecar no longer pays, so a measurement is only steady when it is small
 * @param controlCpuUsPerReq CPU of Weft's control plane over the window, per request (it stores the spans the
 *                          sidecars send); NaN for planes without one
 * @param rssConsumerMiB    peak RSS of the consumer-side proxy
 * @param rssProviderMiB    peak RSS of the largest provider-side proxy
 * @param linkBytesPerReq   bytes on the link between the two proxy roles (both directions) per request
 * @param machineBusyPct    busy share of all cores, whole machine
 * @param loadAverage       1-minute load average as the window began
 * @param generatorCpuUsPerReq the load generator's CPU per request (wrk's, or the bench's own process for the
 *                             built-in one)
 * @param generatorCores    the same in cores
 * @param appsCpuUsPerReq   the example apps' CPU per request (providers and consumer)
 * @param proxyCpuPerWork   the proxies' CPU over the apps' and the generator's in the same window: the machine's
 *                          speed, which moves a plane's CPU per request by up to a third between rounds, moves theirs
 *                          too, so this ratio compares rounds (and variants) of one plane. Not planes with each
 *                          other: how a plane delivers the load changes what the apps spend on it (docs/benchmarks.md,
 *                          session 23). NaN without proxies or without the others' CPU
 * @param readyMs           slowest proxy's time from process start to ready
 * @param warmupS           unrecorded load on this topology before the window: warm-up, first warm-up and JIT
 *                          settling together
 * @param weightOffPct      how far the providers' shares of the requests were from their weights' shares: the
 *                          largest difference, in percentage points (NaN with a single provider)
 * @param tlsHandshakesPerSec TLS handshakes on the mesh link per second of the window, as Weft's sidecars count them
 *                          (both ends of a handshake count it): 0 when every request went over connections made
 *                          before the window; NaN for planes that export no such counter (the peers)
 */
record BenchRow(String section, String plane, int threads, int round, int connections, double qps, double ceilingRatio,
                double p50Ms, double p90Ms, double p99Ms, double maxMs, long requests, long errors,
                double proxyCpuUsPerReq, double jitCpuUsPerReq, double controlCpuUsPerReq, double rssConsumerMiB, double rssProviderMiB, double linkBytesPerReq,
                double machineBusyPct, double loadAverage, double generatorCpuUsPerReq, double generatorCores,
                double appsCpuUsPerReq, double proxyCpuPerWork, double readyMs, double warmupS, double weightOffPct,
                double tlsHandshakesPerSec, String error) {

    static final double MIB = 1024.0 * 1024.0;

    /** @param warmup unrecorded load on this topology before the window (see {@code warmupS}) */
    static BenchRow of(String section, String plane, int threads, int round, ExperimentResult result,
                       java.time.Duration warmup) {
        LoadResult load = result.load();
        ExperimentResult.Figures f = result.figures();
        long requests = load.requests();
        boolean proxied = !f.proxies().isEmpty();
        double cpu = proxied && requests > 0 ? f.proxyCpu().toNanos() / 1_000.0 / requests : Double.NaN;
        double jit = proxied && requests > 0 ? f.proxyJitCpu().toNanos() / 1_000.0 / requests : Double.NaN;
        double control = f.controlCpu() != null && requests > 0 ? f.controlCpu().toNanos() / 1_000.0 / requests
                : Double.NaN;
        double rssConsumer = f.proxies().stream().filter(ExperimentResult.ProxyFigure::consumerSide)
                .mapToDouble(p -> p.peakRssBytes() / MIB).max().orElse(Double.NaN);
        double rssProvider = f.proxies().stream().filter(p -> !p.consumerSide())
                .mapToDouble(p -> p.peakRssBytes() / MIB).max().orElse(Double.NaN);
        double link = f.linkKnown() && requests > 0
                ? (double) (f.linkBytesRequests() + f.linkBytesAnswers()) / requests : Double.NaN;
        double ready = f.proxies().stream().mapToDouble(p -> p.ready().toNanos() / 1e6).max().orElse(Double.NaN);
        double weightOff = result.providers().size() < 2 ? Double.NaN : result.providers().stream()
                .mapToDouble(p -> Math.abs(p.share() - p.weightShare()) * 100).max().orElse(Double.NaN);
        double apps = f.appsCpu() != null && requests > 0 ? f.appsCpu().toNanos() / 1_000.0 / requests : Double.NaN;
        double work = apps + load.cpuMicrosPerRequest();
        double perWork = work > 0 ? cpu / work : Double.NaN;
        double seconds = load.measured().toNanos() / 1e9;
        double handshakes = seconds > 0 ? f.tlsHandshakes() / seconds : Double.NaN;
        return new BenchRow(section, plane, threads, round, load.connections(), load.qps(), load.ceilingRatio(),
                load.latency().p50Ms(), load.latency().p90Ms(), load.latency().p99Ms(), load.latency().maxMs(),
                requests, load.errors().total(), cpu, jit, control, rssConsumer, rssProvider, link,
                f.machineBusy() * 100, f.loadAverage(), load.cpuMicrosPerRequest(), load.cpuCores(), apps, perWork,
                ready,
                warmup.toMillis() / 1000.0, weightOff, handshakes, null);
    }

    static BenchRow failed(String section, String plane, int threads, int round, int connections, String error) {
        double n = Double.NaN;
        return new BenchRow(section, plane, threads, round, connections, n, n, n, n, n, n, 0, 0, n, n, n, n, n, n, n,
                ProcStats.loadAverage(), n, n, n, n, n, n, n, n, error);
    }

    boolean ok() {
        return error == null;
    }

    /**
     * The median of each figure over the rounds that succeeded (each figure on its own, as benchmark tables do);
     * requests and errors are summed over all rounds. Null when no round succeeded.
     */
    static BenchRow median(List<BenchRow> rounds) {
        List<BenchRow> ok = rounds.stream().filter(BenchRow::ok).toList();
        if (ok.isEmpty()) {
            return null;
        }
        BenchRow first = ok.getFirst();
        return new BenchRow(first.section, first.plane, first.threads, ok.size(), first.connections,
                med(ok, BenchRow::qps),
                med(ok, BenchRow::ceilingRatio), med(ok, BenchRow::p50Ms), med(ok, BenchRow::p90Ms),
                med(ok, BenchRow::p99Ms), med(ok, BenchRow::maxMs),
                ok.stream().mapToLong(BenchRow::requests).sum(), ok.stream().mapToLong(BenchRow::errors).sum(),
                med(ok, BenchRow::proxyCpuUsPerReq), med(ok, BenchRow::jitCpuUsPerReq), med(ok, BenchRow::controlCpuUsPerReq), med(ok, BenchRow::rssConsumerMiB),
                med(ok, BenchRow::rssProviderMiB), med(ok, BenchRow::linkBytesPerReq),
                med(ok, BenchRow::machineBusyPct), med(ok, BenchRow::loadAverage),
                med(ok, BenchRow::generatorCpuUsPerReq), med(ok, BenchRow::generatorCores),
                med(ok, BenchRow::appsCpuUsPerReq), med(ok, BenchRow::proxyCpuPerWork), med(ok, BenchRow::readyMs),
                med(ok, BenchRow::warmupS), med(ok, BenchRow::weightOffPct), med(ok, BenchRow::tlsHandshakesPerSec), null);
    }

    /** Median of the known values; NaN when none is known. */
    static double med(List<BenchRow> rows, ToDoubleFunction<BenchRow> figure) {
        double[] values = rows.stream().mapToDouble(figure).filter(v -> !Double.isNaN(v)).sorted().toArray();
        if (values.length == 0) {
            return Double.NaN;
        }
        int mid = values.length / 2;
        return values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    }

    /** The larger of the two proxy roles' peak RSS: "peak RSS per sidecar" in the targets. */
    double rssMaxMiB() {
        return Arrays.stream(new double[] {rssConsumerMiB, rssProviderMiB}).filter(v -> !Double.isNaN(v)).max()
                .orElse(Double.NaN);
    }

    static final List<String> CSV_HEADER = List.of("section", "plane", "proxy_threads", "round", "connections", "qps",
            "ceiling_ratio", "p50_ms", "p90_ms", "p99_ms", "max_ms", "requests", "errors", "proxy_cpu_us_per_req",
            "jit_cpu_us_per_req", "control_cpu_us_per_req",
            "rss_consumer_side_mib", "rss_provider_side_max_mib", "link_bytes_per_req", "machine_busy_pct",
            "load_avg_1m", "generator_cpu_us_per_req", "generator_cores", "apps_cpu_us_per_req", "proxy_cpu_per_work",
            "ready_ms", "warmup_s", "weight_off_pct",
            "tls_handshakes_per_s", "error");

    List<String> csv() {
        List<String> cells = new ArrayList<>(List.of(section, plane, threadsLabel(threads), Integer.toString(round),
                Integer.toString(connections)));
        for (double v : new double[] {qps, ceilingRatio, p50Ms, p90Ms, p99Ms, maxMs}) {
            cells.add(num(v));
        }
        cells.add(Long.toString(requests));
        cells.add(Long.toString(errors));
        for (double v : new double[] {proxyCpuUsPerReq, jitCpuUsPerReq, controlCpuUsPerReq, rssConsumerMiB, rssProviderMiB,
                linkBytesPerReq, machineBusyPct, loadAverage, generatorCpuUsPerReq, generatorCores, appsCpuUsPerReq,
                proxyCpuPerWork, readyMs, warmupS,
                weightOffPct, tlsHandshakesPerSec}) {
            cells.add(num(v));
        }
        cells.add(error == null ? "" : error);
        return cells;
    }

    /** A thread count as the tables show it: the number, "default" for the proxies' own, empty without proxies. */
    static String threadsLabel(int threads) {
        return threads < 0 ? "" : threads == DataPlane.OWN_DEFAULT_THREADS ? "default" : Integer.toString(threads);
    }

    /** Plain decimal with up to 3 places; empty for NaN (unknown or not applicable). */
    static String num(double v) {
        if (Double.isNaN(v)) {
            return "";
        }
        return new java.math.BigDecimal(v).setScale(3, java.math.RoundingMode.HALF_UP).stripTrailingZeros()
                .toPlainString();
    }
}
