package dev.weft.bench;

import dev.weft.registry.support.Durations;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Everything one {@code weft bench} run measured, and the files it writes:
 *
 * <ul>
 *   <li>{@code rounds.csv}: every measured load, one row per round;</li>
 *   <li>{@code mesh.csv}, {@code hop.csv}: the medians over the rounds;</li>
 *   <li>{@code mesh-chart.svg}: QPS and p99 by connections, one line per data plane;</li>
 *   <li>{@code summary.md}: the machine, the settings, every table (mesh, per hop, protocol, Collaborator modes,
 *       JMH) and the targets with the figure measured for each.</li>
 * </ul>
 */
public final class BenchReport {
    private final Bench.Settings settings;
    private final String machine;
    private final List<BenchRow> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private List<JmhRunner.Result> jmh = List.of();
    private double loadAverageAtStart = Double.NaN;
    private double loadAverageAtEnd = Double.NaN;
    private final ZonedDateTime started = ZonedDateTime.now();

    BenchReport(Bench.Settings settings, String machine) {
        this.settings = settings;
        this.machine = machine;
    }

    void addAll(List<BenchRow> more) {
        rows.addAll(more);
    }

    void note(String note) {
        notes.add(note);
    }

    void jmh(List<JmhRunner.Result> results) {
        this.jmh = List.copyOf(results);
    }

    void loadAverageAtStart(double v) {
        loadAverageAtStart = v;
    }

    void loadAverageAtEnd(double v) {
        loadAverageAtEnd = v;
    }

    public List<BenchRow> rows() {
        return List.copyOf(rows);
    }

    public List<JmhRunner.Result> jmhResults() {
        return jmh;
    }

    /**
     * Medians over the rounds of one section, by proxy threads, then in plane order, then connections (so planes
     * at equal thread counts are next to each other); failed-only groups are left out.
     */
    public List<BenchRow> medians(String section) {
        Map<String, List<BenchRow>> groups = new LinkedHashMap<>();
        for (BenchRow r : rows) {
            if (r.section().equals(section)) {
                groups.computeIfAbsent(r.plane() + "/" + r.threads() + "/" + r.connections(), k -> new ArrayList<>())
                        .add(r);
            }
        }
        return groups.values().stream().map(BenchRow::median).filter(Objects::nonNull)
                .sorted(Comparator.comparingInt(BenchRow::threads)
                        .thenComparingInt((BenchRow r) -> Bench.ALL_PLANES.indexOf(r.plane()))
                        .thenComparingInt(BenchRow::connections))
                .toList();
    }

    /** Rows that failed, with their reason: shown in the summary so a missing line in a table is explained. */
    List<BenchRow> failures() {
        return rows.stream().filter(r -> !r.ok()).toList();
    }

    void write() throws IOException {
        Path dir = settings.results();
        writeCsv(dir.resolve("rounds.csv"), rows);
        writeCsv(dir.resolve("mesh.csv"), medians("mesh"));
        writeCsv(dir.resolve("hop.csv"), medians("hop"));
        if (!medians("mesh").isEmpty()) {
            Files.writeString(dir.resolve("mesh-chart.svg"), SvgChart.render(medians("mesh"),
                    "Mesh experiment: medians of " + settings.rounds() + " round" + (settings.rounds() == 1 ? "" : "s")
                            + ", " + Durations.format(settings.duration()) + " each"), StandardCharsets.UTF_8);
        }
        if (!jmh.isEmpty()) {
            StringBuilder csv = new StringBuilder("benchmark,params,ns_per_op,ns_error,bytes_per_op\n");
            for (JmhRunner.Result r : jmh) {
                csv.append(String.join(",", r.benchmark(), r.params().replace(',', ';'), BenchRow.num(r.nsPerOp()),
                        BenchRow.num(r.nsError()), BenchRow.num(r.bytesPerOp()))).append('\n');
            }
            Files.writeString(dir.resolve("jmh.csv"), csv.toString(), StandardCharsets.UTF_8);
        }
        Files.writeString(dir.resolve("summary.md"), markdown(), StandardCharsets.UTF_8);
    }

    private static void writeCsv(Path file, List<BenchRow> rows) throws IOException {
        StringBuilder out = new StringBuilder(String.join(",", BenchRow.CSV_HEADER)).append('\n');
        for (BenchRow r : rows) {
            out.append(r.csv().stream().map(BenchReport::csvCell).collect(Collectors.joining(","))).append('\n');
        }
        Files.writeString(file, out.toString(), StandardCharsets.UTF_8);
    }

    private static String csvCell(String cell) {
        return cell.contains(",") || cell.contains("\"") || cell.contains("\n")
                ? "\"" + cell.replace("\"", "\"\"").replace("\n", " ") + "\"" : cell;
    }

    /** The whole report as Markdown (also what docs/benchmarks.md quotes). */
    public String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Weft bench results\n\n");
        md.append("- when: ").append(started.format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)).append('\n');
        md.append("- machine: ").append(machine).append('\n');
        md.append(String.format(Locale.ROOT, "- load average (1 min): %.2f at start, %.2f at end%n",
                loadAverageAtStart, loadAverageAtEnd));
        md.append("- settings: ").append(settings.rounds()).append(" round(s); warm-up ")
                .append(Durations.format(settings.warmup())).append(" (+")
                .append(Durations.format(settings.firstWarmup())).append(" before a topology's first load), mesh ")
                .append(Durations.format(settings.duration())).append(" at ")
                .append(settings.connections().stream().map(String::valueOf).collect(Collectors.joining("/")))
                .append(" connections, per hop ").append(Durations.format(settings.hopDuration()))
                .append(" at ").append(settings.hopConnections()).append(" connections; load generator ")
                .append(settings.generator().label()).append(" on ").append(settings.loadThreads())
                .append(" thread(s); proxies on ").append(settings.proxyThreads().isEmpty() ? "their default threads"
                        : settings.proxyThreads().stream().map(String::valueOf).collect(Collectors.joining(" and "))
                        + " thread(s)").append(" (column *threads*); provider capacities ")
                .append(capacities()).append('\n');
        md.append("- Weft sidecar JVM: `").append(String.join(" ", ChildJvm.FLAGS)).append(' ')
                .append(String.join(" ", settings.sidecarJvm())).append("`")
                .append(dev.weft.dataplane.SidecarJvm.aotCache(settings.sidecarJvm()).isPresent()
                        ? ", with the AOT cache ./weft trained" : ", without an AOT cache").append('\n');
        md.append("- figures are medians over the rounds; requests and errors are totals over the rounds\n");
        for (String note : notes) {
            md.append("- note: ").append(note).append('\n');
        }
        md.append('\n');

        List<BenchRow> mesh = medians("mesh");
        if (!mesh.isEmpty()) {
            md.append("## Mesh experiment\n\n");
            md.append("load generator (" + settings.generator().label() + ") → consumer → consumer-side proxy → "
                    + "provider-side proxy → 3 providers (" + settings.providerDelay().toMillis() + " ms, weights 1:2:3, capacities "
                    + capacities() + " in flight). Ceiling = connections / " + settings.providerDelay().toMillis() + " ms. *threads*: each proxy's threads (Weft --workers, "
                    + "HAProxy nbthread, nginx worker_processes, Caddy GOMAXPROCS).\n\n");
            md.append(meshTable(mesh)).append('\n');
            md.append("![QPS and p99 by connections](mesh-chart.svg)\n\n");
            md.append(protocolTable(mesh));
            md.append(collaboratorTable(mesh));
            md.append(TlsReport.table("mesh", mesh));
        }
        List<BenchRow> hop = medians("hop");
        if (!hop.isEmpty()) {
            md.append("## Per hop\n\n");
            md.append("load generator → consumer-side proxy → provider-side proxy → backend (no delay), saturated with ")
                    .append(settings.hopConnections()).append(" connections. Two proxies, as a Weft hop is always a "
                            + "pair of sidecars: the per-hop figures are half the pair's; added latency is against "
                            + "`direct` (generator → backend).\n\n");
            md.append(hopTable(hop)).append('\n');
            md.append(TlsReport.table("hop", hop));
        }
        if (!jmh.isEmpty()) {
            md.append("## Microbenchmarks (JMH, -prof gc)\n\n");
            md.append(jmhTable()).append('\n');
        }
        md.append("## Targets (issues 12 and 15)\n\n").append(targets(mesh, hop)).append('\n');
        if (TlsReport.ran(rows)) {
            md.append("## Targets (issue 13: mTLS on the link)\n\n").append(tlsTargets(mesh, hop)).append('\n');
        }
        if (!failures().isEmpty()) {
            md.append("## Failed measurements\n\n| section | plane | threads | round | connections | error |\n"
                    + "|---|---|---|---|---|---|\n");
            for (BenchRow r : failures()) {
                md.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %d | %s |%n", r.section(), r.plane(),
                        BenchRow.threadsLabel(r.threads()), r.round(), r.connections(), r.error().replace("|", "/")));
            }
            md.append('\n');
        }
        md.append("## Data planes\n\n| plane | threads | link between the proxies | what ran |\n|---|---|---|---|\n");
        for (Bench.PlaneRun run : rows.stream().map(r -> new Bench.PlaneRun(r.plane(), r.threads())).distinct()
                .sorted(Comparator.comparingInt((Bench.PlaneRun r) -> Bench.ALL_PLANES.indexOf(r.plane()))
                        .thenComparingInt(Bench.PlaneRun::threads)).toList()) {
            md.append("| ").append(run.plane()).append(" | ").append(BenchRow.threadsLabel(run.threads()))
                    .append(" | ").append(Bench.link(run.plane()))
                    .append(" | ").append(Bench.dataPlane(run.plane(), settings.sidecarJvm(), run.threads())
                            .description().replace("|", "/"))
                    .append(" |\n");
        }
        return md.toString();
    }

    /** The providers' capacities as the report shows them, small/medium/large: {@code 100/200/300}. */
    private String capacities() {
        return settings.capacities().stream().map(String::valueOf).collect(Collectors.joining("/"));
    }

    static String meshTable(List<BenchRow> mesh) {
        StringBuilder t = new StringBuilder("| plane | threads | conns | QPS | ratio | p50 ms | p90 ms | p99 ms | max ms "
                + "| errors | proxy CPU µs/req | of which JIT | control plane CPU µs/req | peak RSS consumer-side MiB "
                + "| peak RSS provider-side MiB | link B/req | ready ms | warm-up s | off weights pp | machine busy % | load avg "
                + "| generator CPU µs/req | apps CPU µs/req | proxy CPU ÷ (apps + generator) |\n");
        t.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (BenchRow r : mesh) {
            t.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                    r.plane(), BenchRow.threadsLabel(r.threads()), r.connections(), f(r.qps(), 0),
                    f(r.ceilingRatio(), 2), f(r.p50Ms(), 1), f(r.p90Ms(), 1),
                    f(r.p99Ms(), 1), f(r.maxMs(), 1), r.errors(), f(r.proxyCpuUsPerReq(), 1),
                    f(r.jitCpuUsPerReq(), 1), f(r.controlCpuUsPerReq(), 1), f(r.rssConsumerMiB(), 0),
                    f(r.rssProviderMiB(), 0), f(r.linkBytesPerReq(), 0), f(r.readyMs(), 0), f(r.warmupS(), 0),
                    f(r.weightOffPct(), 1),
                    f(r.machineBusyPct(), 0), f(r.loadAverage(), 1), f(r.generatorCpuUsPerReq(), 1),
                    f(r.appsCpuUsPerReq(), 1), f(r.proxyCpuPerWork(), 3)));
        }
        return t.toString();
    }

    static String protocolTable(List<BenchRow> mesh) {
        return comparison(mesh, "weft", "weft-http1", "### Protocol on the sidecar link: WMP vs HTTP/1.1\n\n"
                        + "Bytes per request counted at the socket (kernel tcp_info of the provider-side sidecars' "
                        + "inbound connections, both directions).\n\n",
                "| conns | WMP B/req | HTTP/1.1 B/req | WMP saves | WMP QPS | HTTP/1.1 QPS | WMP p99 ms | HTTP/1.1 p99 ms "
                        + "| WMP CPU µs/req | HTTP/1.1 CPU µs/req |",
                (w, h) -> List.of(f(w.linkBytesPerReq(), 0), f(h.linkBytesPerReq(), 0),
                        pct(1 - w.linkBytesPerReq() / h.linkBytesPerReq()), f(w.qps(), 0), f(h.qps(), 0),
                        f(w.p99Ms(), 1), f(h.p99Ms(), 1), f(w.proxyCpuUsPerReq(), 1), f(h.proxyCpuUsPerReq(), 1)));
    }

    static String collaboratorTable(List<BenchRow> mesh) {
        return comparison(mesh, "weft", "weft-vt", "### Collaborator modes: event-loop vs virtual-thread\n\n",
                "| conns | event-loop QPS | virtual-thread QPS | event-loop p99 ms | virtual-thread p99 ms "
                        + "| event-loop CPU µs/req | virtual-thread CPU µs/req | event-loop RSS MiB "
                        + "| virtual-thread RSS MiB |",
                (l, v) -> List.of(f(l.qps(), 0), f(v.qps(), 0), f(l.p99Ms(), 1), f(v.p99Ms(), 1),
                        f(l.proxyCpuUsPerReq(), 1), f(v.proxyCpuUsPerReq(), 1), f(l.rssMaxMiB(), 0),
                        f(v.rssMaxMiB(), 0)));
    }

    /**
     * A table of two data planes side by side, one line per thread count and connection count both were measured
     * at. {@code header} starts with the connections column; the threads column is put before it.
     */
    private static String comparison(List<BenchRow> mesh, String a, String b, String intro, String header,
                                     java.util.function.BiFunction<BenchRow, BenchRow, List<String>> cells) {
        List<BenchRow> left = mesh.stream().filter(r -> r.plane().equals(a)).toList();
        List<BenchRow> right = mesh.stream().filter(r -> r.plane().equals(b)).toList();
        if (left.isEmpty() || right.isEmpty()) {
            return "";
        }
        int columns = header.split("\\|", -1).length - 1;
        StringBuilder t = new StringBuilder(intro).append("| threads ").append(header).append('\n')
                .append("|---:".repeat(columns)).append("|\n");
        for (BenchRow l : left) {
            right.stream().filter(r -> r.threads() == l.threads() && r.connections() == l.connections()).findFirst()
                    .ifPresent(r -> t.append("| ").append(BenchRow.threadsLabel(l.threads())).append(" | ")
                            .append(l.connections()).append(" | ").append(String.join(" | ", cells.apply(l, r)))
                            .append(" |\n"));
        }
        return t.append('\n').toString();
    }

    static String hopTable(List<BenchRow> hop) {
        BenchRow direct = hop.stream().filter(r -> r.plane().equals(DirectDataPlane.NAME)).findFirst().orElse(null);
        StringBuilder t = new StringBuilder("| plane | threads | QPS | CPU µs/req per hop | p50 ms | p99 ms "
                + "| added p50 ms per hop | added p99 ms per hop | peak RSS MiB (largest proxy) | errors | machine busy % "
                + "| generator CPU µs/req |\n");
        t.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (BenchRow r : hop) {
            boolean proxied = !r.plane().equals(DirectDataPlane.NAME);
            t.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |%n",
                    r.plane(), BenchRow.threadsLabel(r.threads()),
                    f(r.qps(), 0), f(r.proxyCpuUsPerReq() / 2, 1), f(r.p50Ms(), 2), f(r.p99Ms(), 2),
                    proxied && direct != null ? f((r.p50Ms() - direct.p50Ms()) / 2, 3) : "",
                    proxied && direct != null ? f((r.p99Ms() - direct.p99Ms()) / 2, 3) : "",
                    f(r.rssMaxMiB(), 0), r.errors(), f(r.machineBusyPct(), 0), f(r.generatorCpuUsPerReq(), 1)));
        }
        return t.toString();
    }

    private String jmhTable() {
        StringBuilder t = new StringBuilder("| benchmark | params | ns/op | ± | B/op |\n|---|---|---:|---:|---:|\n");
        for (JmhRunner.Result r : jmh) {
            t.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", r.benchmark(), r.params(),
                    f(r.nsPerOp(), 1), f(r.nsError(), 1), f(r.bytesPerOp(), 1)));
        }
        return t.toString();
    }

    /**
     * The targets, each with the figures measured in this run and whether it is met: once per proxy thread
     * count when the planes ran at several (the targets compare planes at equal thread counts).
     */
    String targets(List<BenchRow> mesh, List<BenchRow> hop) {
        StringBuilder t = new StringBuilder("| target | measured | met |\n|---|---|---|\n");
        perThreadCount(mesh, hop, (m, h, threads, where) -> t.append(targets(m, h, threads, where)));
        // The target is for the sidecar as users run it (tracing and metrics on); the bare figure says what they cost.
        JmhRunner.Result hot = perHop(jmh, "observability=on", true);
        if (hot != null) {
            JmhRunner.Result bareHop = perHop(jmh, "observability=off", false);
            t.append(row("hot path < 1 KiB allocated per request per hop", f(hot.bytesPerOp(), 0) + " B"
                    + (bareHop != null ? " (" + f(bareHop.bytesPerOp(), 0) + " B with tracing and metrics off)" : ""),
                    hot.bytesPerOp() < 1024));
        }
        return t.toString();
    }

    /** Issue 13's targets ({@link TlsReport#targets}), once per proxy thread count as the others. */
    String tlsTargets(List<BenchRow> mesh, List<BenchRow> hop) {
        StringBuilder t = new StringBuilder("| target | measured | met |\n|---|---|---|\n");
        int top = settings.connections().stream().mapToInt(Integer::intValue).max().orElse(512);
        perThreadCount(mesh, hop, (m, h, threads, where) -> t.append(TlsReport.targets(m, h,
                rows.stream().filter(r -> r.threads() == threads).toList(), top, where)));
        return t.toString();
    }

    /** One thread count's medians: {@code where} names it when there are several, else it is empty. */
    private interface ThreadCountRows {
        void accept(List<BenchRow> mesh, List<BenchRow> hop, int threads, String where);
    }

    /**
     * Calls {@code each} once per proxy thread count the planes ran at (the targets compare planes at equal counts);
     * {@code direct} (no threads) is every count's baseline.
     */
    private static void perThreadCount(List<BenchRow> mesh, List<BenchRow> hop, ThreadCountRows each) {
        List<Integer> counts = Stream.concat(mesh.stream(), hop.stream()).map(BenchRow::threads)
                .filter(n -> n >= 0).distinct().sorted().toList();
        for (int threads : counts.isEmpty() ? List.of(DataPlane.OWN_DEFAULT_THREADS) : counts) {
            String where = counts.size() > 1 ? ", " + BenchRow.threadsLabel(threads)
                    + (threads == 1 ? " thread" : " threads") : "";
            each.accept(mesh.stream().filter(r -> r.threads() == threads || r.threads() < 0).toList(),
                    hop.stream().filter(r -> r.threads() == threads || r.threads() < 0).toList(), threads, where);
        }
    }

    /** The targets' rows of one thread count; {@code where} says which, when there are several. */
    private String targets(List<BenchRow> mesh, List<BenchRow> hop, int threads, String where) {
        StringBuilder t = new StringBuilder();
        int top = settings.connections().stream().mapToInt(Integer::intValue).max().orElse(512);
        Function<String, BenchRow> at = plane -> byConnections(mesh, plane).get(top);
        String meshTop = "mesh " + top + where;
        String perHopAt = "per hop" + where;
        BenchRow weft = at.apply("weft");
        BenchRow nginx = at.apply("nginx");
        BenchRow haproxy = at.apply("haproxy");
        if (weft != null && (nginx != null || haproxy != null)) {
            double best = Math.max(nginx == null ? 0 : nginx.qps(), haproxy == null ? 0 : haproxy.qps());
            t.append(row(meshTop + ": Weft QPS ≥ best of nginx, HAProxy",
                    String.format(Locale.ROOT, "Weft %.0f; nginx %s; HAProxy %s", weft.qps(),
                            nginx == null ? "n/a" : f(nginx.qps(), 0), haproxy == null ? "n/a" : f(haproxy.qps(), 0))
                            + byRound("weft", "haproxy", threads, top, BenchRow::qps), weft.qps() >= best));
        }
        if (weft != null && haproxy != null) {
            t.append(row(meshTop + ": Weft proxy CPU µs/req ≤ HAProxy's", f(weft.proxyCpuUsPerReq(), 1) + " vs "
                    + f(haproxy.proxyCpuUsPerReq(), 1) + byRound("weft", "haproxy", threads, top,
                    BenchRow::proxyCpuUsPerReq), weft.proxyCpuUsPerReq() <= haproxy.proxyCpuUsPerReq()));
            t.append(row(meshTop + ": Weft p99 ≤ HAProxy's", f(weft.p99Ms(), 1) + " ms vs "
                    + f(haproxy.p99Ms(), 1) + " ms" + byRound("weft", "haproxy", threads, top, BenchRow::p99Ms),
                    weft.p99Ms() <= haproxy.p99Ms()));
        }
        BenchRow weftHop = hop.stream().filter(r -> r.plane().equals("weft")).findFirst().orElse(null);
        BenchRow haproxyHop = hop.stream().filter(r -> r.plane().equals("haproxy")).findFirst().orElse(null);
        BenchRow directHop = hop.stream().filter(r -> r.plane().equals("direct")).findFirst().orElse(null);
        if (weftHop != null) {
            double perHop = weftHop.proxyCpuUsPerReq() / 2;
            t.append(row(perHopAt + ": CPU ≤ 25 µs/request", f(perHop, 1) + " µs", perHop <= 25));
            if (haproxyHop != null && directHop != null) {
                double w = (weftHop.p50Ms() - directHop.p50Ms()) / 2;
                double h = (haproxyHop.p50Ms() - directHop.p50Ms()) / 2;
                t.append(row(perHopAt + ": added p50 ≤ HAProxy's", f(w, 3) + " ms vs " + f(h, 3) + " ms", w <= h));
            }
        }
        if (weft != null) {
            // Issue 15: the peak (VmHWM, since the sidecar started: its warm-up and the JIT's peaks included).
            t.append(row("peak RSS (VmHWM) per sidecar ≤ 64 MiB (stretch 48) at " + top + " connections" + where,
                    "consumer side " + f(weft.rssConsumerMiB(), 0) + " MiB, largest provider side "
                            + f(weft.rssProviderMiB(), 0) + " MiB", weft.rssMaxMiB() <= 64));
            BenchRow first = mesh.stream().filter(r -> r.plane().equals("weft")).findFirst().orElse(weft);
            t.append(row("sidecar ready < 300 ms after start" + where, "slowest sidecar " + f(first.readyMs(), 0) + " ms",
                    first.readyMs() < 300));
        }
        BenchRow bare = at.apply("weft-bare");
        if (weft != null && bare != null) {
            // Issue 6: tracing and metrics as shipped (traces sampled, docs/observability.md) cost at most 5% of the
            // QPS of the same sidecars with both off.
            double cost = 1 - weft.qps() / bare.qps();
            t.append(row("observability: QPS with tracing (as shipped) + metrics within 5% of both off, at " + top
                    + where, f(weft.qps(), 0) + " vs " + f(bare.qps(), 0) + " (" + pct(cost) + " lower); proxy CPU "
                            + f(weft.proxyCpuUsPerReq(), 1) + " vs " + f(bare.proxyCpuUsPerReq(), 1) + " µs/req"
                            + byRound("weft", "weft-bare", threads, top, BenchRow::qps), cost <= 0.05));
            // Issue 12: the same budget for CPU per request, at each thread count.
            double cpuCost = weft.proxyCpuUsPerReq() / bare.proxyCpuUsPerReq() - 1;
            t.append(row("observability: proxy CPU µs/req with tracing and metrics within 5% of both off, at " + top
                    + where, f(weft.proxyCpuUsPerReq(), 1) + " vs " + f(bare.proxyCpuUsPerReq(), 1) + " ("
                    + pct(cpuCost) + " more)" + byRound("weft", "weft-bare", threads, top,
                    BenchRow::proxyCpuUsPerReq), cpuCost <= 0.05));
        }
        BenchRow http1 = at.apply("weft-http1");
        if (weft != null && http1 != null) {
            double saved = 1 - weft.linkBytesPerReq() / http1.linkBytesPerReq();
            t.append(row("WMP ≥ 40% fewer bytes/request than HTTP/1.1 on the link" + where, f(weft.linkBytesPerReq(), 0)
                    + " vs " + f(http1.linkBytesPerReq(), 0) + " B (" + pct(saved) + " fewer)", saved >= 0.40));
            t.append(row("WMP QPS > HTTP/1.1 QPS at " + top + where, f(weft.qps(), 0) + " vs " + f(http1.qps(), 0),
                    weft.qps() > http1.qps()));
        }
        return t.toString();
    }

    /**
     * The hot path's per-hop row run with {@code params}; with {@code orUnparameterised}, also a row from a run
     * without parameters (results of an older bench).
     */
    private static JmhRunner.Result perHop(List<JmhRunner.Result> jmh, String params, boolean orUnparameterised) {
        return jmh.stream().filter(r -> r.benchmark().endsWith("HotPathBenchmark.perHop"))
                .filter(r -> r.params().startsWith(params)
                        || orUnparameterised && !r.params().startsWith("observability="))
                .findFirst().orElse(null);
    }

    /**
     * Plane {@code a}'s figure against {@code b}'s in each round, as {@code "; by round: +9%, +26%, -0%"} (empty for
     * one round). The planes of one round ran minutes apart, those of different rounds up to an hour apart, and this
     * machine's speed drifted by up to 40% within one run (session 11): a ratio paired by round shows whether a
     * difference of medians is the planes' or the machine's. "Met" stays on the medians, as the issues define it.
     */
    private String byRound(String a, String b, int threads, int connections, ToDoubleFunction<BenchRow> figure) {
        List<String> ratios = new ArrayList<>();
        for (BenchRow ra : rows) {
            if (!ra.ok() || !ra.section().equals("mesh") || !ra.plane().equals(a) || ra.threads() != threads
                    || ra.connections() != connections) {
                continue;
            }
            rows.stream().filter(rb -> rb.ok() && rb.section().equals("mesh") && rb.plane().equals(b)
                            && rb.threads() == threads && rb.round() == ra.round() && rb.connections() == connections)
                    .findFirst().ifPresent(rb -> ratios.add(String.format(Locale.ROOT, "%+.0f%%",
                            (figure.applyAsDouble(ra) / figure.applyAsDouble(rb) - 1) * 100)));
        }
        return ratios.size() < 2 ? "" : "; " + a + " against " + b + " by round: " + String.join(", ", ratios);
    }

    static String row(String target, String measured, boolean met) {
        return "| " + target + " | " + measured + " | " + (met ? "yes" : "**no**") + " |\n";
    }

    private static Map<Integer, BenchRow> byConnections(List<BenchRow> rows, String plane) {
        Map<Integer, BenchRow> map = new LinkedHashMap<>();
        rows.stream().filter(r -> r.plane().equals(plane)).forEach(r -> map.put(r.connections(), r));
        return map;
    }

    static String f(double v, int decimals) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String pct(double share) {
        return Double.isNaN(share) || Double.isInfinite(share) ? "" : String.format(Locale.ROOT, "%.0f%%", share * 100);
    }
}
