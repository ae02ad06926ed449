package dev.weft.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code weft bench observability}: what observability costs the sidecars, priced on one warm topology by pausing it
 * ({@code POST /observability?state=off} on every sidecar's admin port) and resuming it, window after window.
 *
 * <p>Why not two planes: issue 12's target (CPU per request within 5 % of observability off) was measured by starting
 * {@code weft} and {@code weft-bare} one after the other, each with its own JIT warm-up, and this machine kind's
 * speed drifts by 10-40 % within minutes (docs/benchmarks.md, session 11): the two planes' difference was smaller
 * than the drift between them. Here both states run on the same processes, the same JIT-compiled code and the same
 * provider apps; windows alternate in pairs whose order flips each time (on-off, off-on, on-off...), so that a drift
 * that is linear over a pair cancels in the median, and each pair's two windows are at most a window and a gap apart.
 *
 * <p>Each window is a load of its own ({@link Experiment#measure}: a short unrecorded gap on fresh connections, then
 * the measured window), so the CPU of opening 512 connections falls outside the window in both states.
 *
 * <p>Thread: the command's. No buffers.
 */
final class ObservabilityAb {
    /** One measured window in one state. */
    record Window(int pair, boolean on, BenchRow row) {}

    /** A pair's two windows and what observability cost in it. */
    record Pair(int index, BenchRow on, BenchRow off) {
        /** Proxy CPU per request, on over off, minus one: issue 12's figure. */
        double proxyCost() {
            return on.proxyCpuUsPerReq() / off.proxyCpuUsPerReq() - 1;
        }

        /** The same with the control plane (it stores the spans) counted on both sides. */
        double meshCost() {
            return (on.proxyCpuUsPerReq() + nz(on.controlCpuUsPerReq()))
                    / (off.proxyCpuUsPerReq() + nz(off.controlCpuUsPerReq())) - 1;
        }

        /**
         * The same without the JIT compilers' CPU on either side: what a sidecar pays per request once compiled. The
         * switches themselves make the JIT recompile (a path not taken for a while), which no sidecar that is not
         * switched pays; the report gives both figures.
         */
        double steadyCost() {
            return (on.proxyCpuUsPerReq() - nz(on.jitCpuUsPerReq()))
                    / (off.proxyCpuUsPerReq() - nz(off.jitCpuUsPerReq())) - 1;
        }

        /**
         * Proxy CPU per request over the load generator's, on over off, minus one: the cost with the machine's speed
         * divided out. This machine kind's speed moves by a tenth or more between two windows (other guests on the
         * host), and wrk does the same work per request in both states (the same request, the same answer), so its
         * CPU per request in the same window measures the speed the proxies ran at. Session 25: the raw figures'
         * quartiles spanned -2 to +15 %, these 2 to 5 %. NaN when the generator's CPU is unknown.
         */
        double machineCost() {
            double onGen = on.generatorCpuUsPerReq();
            double offGen = off.generatorCpuUsPerReq();
            if (!(onGen > 0) || !(offGen > 0)) {
                return Double.NaN;
            }
            return (on.proxyCpuUsPerReq() / onGen) / (off.proxyCpuUsPerReq() / offGen) - 1;
        }

        double qpsChange() {
            return on.qps() / off.qps() - 1;
        }

        private static double nz(double v) {
            return Double.isNaN(v) ? 0 : v;
        }
    }

    /**
     * @param shape the paper's mesh (four sidecars) or the per-hop pair (two); @param pairs on/off pairs per thread
     * count; @param gap unrecorded load before each window
     */
    record Settings(Experiment.Shape shape, int connections, int pairs, Duration window, Duration gap, Duration jitSettle) {}

    private ObservabilityAb() {
    }

    /**
     * Runs the pairs on a started topology whose sidecars have observability on. Each window first sets every
     * sidecar's state and checks the answer, so a window never runs in a mixed state.
     */
    static List<Window> run(Experiment experiment, Settings settings, int threads, PrintStream progress)
            throws InterruptedException, IOException {
        List<Window> windows = new ArrayList<>();
        HttpProbe admin = experiment.http();
        // Both states warm, paused first: a branch the JIT never saw taken is compiled as a trap, and the
        // first window to take it would pay the deoptimization and the recompilation (seen in the first run:
        // the JIT's CPU in a window rose from 1-3 to 11-17 µs per request after switches).
        for (boolean on : new boolean[] {false, true}) {
            switchAll(admin, experiment.proxies(), on);
            JitSettle.Outcome settled = experiment.settleJit(settings.connections(), settings.jitSettle());
            progress.println("observability ×" + threads + (on ? " on: " : " paused: ") + settled.describe());
        }
        for (int pair = 1; pair <= settings.pairs(); pair++) {
            boolean onFirst = pair % 2 == 1;
            for (boolean on : new boolean[] {onFirst, !onFirst}) {
                switchAll(admin, experiment.proxies(), on);
                ExperimentResult result = experiment.measure(settings.connections(), settings.gap(),
                        settings.window());
                BenchRow row = BenchRow.of("observability", on ? "on" : "paused", threads, pair, result,
                        settings.gap());
                windows.add(new Window(pair, on, row));
                progress.println(String.format(Locale.ROOT, "observability ×%d pair %d/%d %-6s qps %8.1f  "
                                + "proxy CPU %6.1f µs/req (JIT %4.1f)  control plane %5.1f µs/req  errors %d",
                        threads, pair, settings.pairs(), on ? "on" : "paused", row.qps(), row.proxyCpuUsPerReq(),
                        row.jitCpuUsPerReq(), row.controlCpuUsPerReq(), row.errors()));
            }
        }
        switchAll(admin, experiment.proxies(), true);
        return windows;
    }

    /** Sets every Weft sidecar's observability and checks that each says so. */
    static void switchAll(HttpProbe admin, List<DataPlane.Proxy> proxies, boolean on)
            throws IOException, InterruptedException {
        for (DataPlane.Proxy p : proxies) {
            if (p.admin() <= 0) {
                throw new IllegalStateException(p.name() + " has no admin port: only Weft's sidecars can pause");
            }
            HttpResponse<String> r = admin.post(URI.create("http://" + Experiment.LOOPBACK + ":" + p.admin()
                    + "/observability?state=" + (on ? "on" : "off")), Duration.ofSeconds(5));
            String expected = on ? "on" : "paused";
            if (r.statusCode() != 200 || !r.body().strip().equals(expected)) {
                throw new IllegalStateException(p.name() + " answered " + r.statusCode() + " '" + r.body().strip()
                        + "' to observability " + (on ? "on" : "off") + " (expected 200 '" + expected + "')");
            }
        }
    }

    /** The windows of one thread count as pairs, in order. */
    static List<Pair> pairs(List<Window> windows) {
        Map<Integer, BenchRow> on = new TreeMap<>();
        Map<Integer, BenchRow> off = new TreeMap<>();
        windows.forEach(w -> (w.on() ? on : off).put(w.pair(), w.row()));
        return on.entrySet().stream().filter(e -> off.containsKey(e.getKey()))
                .map(e -> new Pair(e.getKey(), e.getValue(), off.get(e.getKey()))).toList();
    }

    /** The report: per thread count, every pair and the medians, against the 5 % target. */
    static String report(List<List<Window>> byThreads, List<Integer> threads, Settings settings, String when,
                         String machine) {
        boolean hop = settings.shape() == Experiment.Shape.HOP;
        StringBuilder t = new StringBuilder("# Observability's cost, paused and resumed on one topology\n\n");
        t.append("`weft bench observability").append(hop ? " --shape hop" : "").append("` at ").append(when)
                .append(". ").append(machine).append("\n\n")
                .append(String.format(Locale.ROOT, "%s at %d connections; per thread count one "
                                + "topology, its JIT settled paused then on (at most %ds each), then %d pairs of %ds "
                                + "windows, each after %ds unrecorded on fresh connections, in the order on-off, "
                                + "off-on, on-off... Paused = `POST /observability?state=off` on %s sidecars (as "
                                + "`--metrics off --tracing off`). Cost = proxy CPU per request on over paused, minus "
                                + "one, pair by pair (issue 12: within 5 %%); *steady* leaves out the JIT compilers' "
                                + "CPU on both sides, which the switches themselves cause (a path not taken for a "
                                + "while is recompiled) and a sidecar that is never switched does not pay; *per wrk "
                                + "CPU* divides each window's proxy CPU by the load generator's, which does the same "
                                + "work in both states, so the machine's speed (it moves between windows) drops out."
                                + "%n%n",
                        hop ? "The per-hop pair (a consumer-side and a provider-side sidecar, one backend without "
                                + "delay; the table gives the pair's CPU, a hop is half of it)" : "The paper's mesh",
                        settings.connections(), settings.jitSettle().toSeconds(), settings.pairs(),
                        settings.window().toSeconds(), settings.gap().toSeconds(), hop ? "both" : "all four"));
        for (int i = 0; i < threads.size(); i++) {
            List<Pair> pairs = pairs(byThreads.get(i));
            t.append("## ").append(threads.get(i)).append(threads.get(i) == 1 ? " Worker" : " Workers")
                    .append(" per sidecar\n\n")
                    .append("| pair | order | QPS on | QPS paused | proxy µs/req on | paused | JIT on | JIT paused "
                            + "| cost | steady cost | per wrk CPU | with control plane | QPS change | errors |\n"
                            + "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (Pair p : pairs) {
                t.append(String.format(Locale.ROOT, "| %d | %s | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %+.1f %% "
                                + "| %+.1f %% | %s | %+.1f %% | %+.1f %% | %d |%n", p.index(),
                        p.index() % 2 == 1 ? "on, off" : "off, on", p.on().qps(), p.off().qps(),
                        p.on().proxyCpuUsPerReq(), p.off().proxyCpuUsPerReq(), p.on().jitCpuUsPerReq(),
                        p.off().jitCpuUsPerReq(), 100 * p.proxyCost(), 100 * p.steadyCost(),
                        Double.isNaN(p.machineCost()) ? "n/a" : String.format(Locale.ROOT, "%+.1f %%",
                                100 * p.machineCost()), 100 * p.meshCost(), 100 * p.qpsChange(),
                        p.on().errors() + p.off().errors()));
            }
            if (pairs.isEmpty()) {
                t.append("\nNo pair completed.\n\n");
                continue;
            }
            double[] cost = sorted(pairs, Pair::proxyCost);
            double[] steady = sorted(pairs, Pair::steadyCost);
            t.append(String.format(Locale.ROOT, "%nMedian cost %s; steady %s; with the control plane %+.1f %%; QPS "
                            + "%+.1f %%. **Target (median within 5 %%): %s on all CPU, %s steady.**%n%n",
                    spread(cost), spread(steady), 100 * median(sorted(pairs, Pair::meshCost)),
                    100 * median(sorted(pairs, Pair::qpsChange)), median(cost) <= 0.05 ? "met" : "not met",
                    median(steady) <= 0.05 ? "met" : "not met"));
            if (pairs.stream().noneMatch(p -> Double.isNaN(p.machineCost()))) {
                double[] divided = sorted(pairs, Pair::machineCost);
                t.append(String.format(Locale.ROOT, "Per wrk CPU (the proxies' CPU over the load generator's in the "
                                + "same window: the machine's speed divided out) %s. **Target: %s with the "
                                + "machine's speed divided out.**%n%n", spread(divided),
                        median(divided) <= 0.05 ? "met" : "not met"));
            }
        }
        return t.toString();
    }

    private static double[] sorted(List<Pair> pairs, java.util.function.ToDoubleFunction<Pair> figure) {
        return pairs.stream().mapToDouble(figure).sorted().toArray();
    }

    /** "+4.0 % (quartiles +1.0 to +6.0 %, range ..., 2 of 3 pairs within 5 %)". */
    private static String spread(double[] sorted) {
        long within = Arrays.stream(sorted).filter(c -> c <= 0.05).count();
        return String.format(Locale.ROOT, "%+.1f %% (quartiles %+.1f to %+.1f %%, range %+.1f to %+.1f %%, %d of %d "
                        + "pairs within 5 %%)", 100 * median(sorted), 100 * quantile(sorted, 0.25),
                100 * quantile(sorted, 0.75), 100 * sorted[0], 100 * sorted[sorted.length - 1], within,
                sorted.length);
    }

    static String csv(List<List<Window>> byThreads) {
        StringBuilder out = new StringBuilder(String.join(",", BenchRow.CSV_HEADER)).append('\n');
        byThreads.forEach(ws -> ws.forEach(w -> out.append(String.join(",", w.row().csv())).append('\n')));
        return out.toString();
    }

    static double median(double[] sorted) {
        return quantile(sorted, 0.5);
    }

    /** Linear interpolation between the closest ranks; {@code sorted} ascending and not empty. */
    static double quantile(double[] sorted, double q) {
        double at = q * (sorted.length - 1);
        int lo = (int) Math.floor(at);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (at - lo) * (sorted[hi] - sorted[lo]);
    }
}
