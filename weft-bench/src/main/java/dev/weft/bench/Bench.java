package dev.weft.bench;

import dev.weft.registry.support.Durations;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * {@code weft bench}: the paper's experiment with every data plane side by side in the same run, the per-hop cost,
 * and the JMH microbenchmarks; writes Markdown, CSV and an SVG chart to a results folder.
 *
 * <p>Each round starts every data plane's topology in turn (the order rotates from round to round, so slow drift of
 * the machine does not always hit the same plane), measures each connection count on it, and stops it. The tables
 * report the median of each figure over the rounds. See docs/benchmarks.md for how to read them.
 */
public final class Bench {
    /** Every data plane the bench knows, in the order the tables list them. */
    public static final List<String> ALL_PLANES =
            List.of("direct", "weft", "weft-mtls", "weft-off", "weft-bare", "weft-notrace", "weft-nometrics",
                    "weft-trace-all", "weft-1w", "weft-wrr", "weft-mc1",
                    "weft-vt", "weft-http1", "nginx", "nginx-tls", "haproxy", "haproxy-tls", "caddy");
    /**
     * The data planes of the per-hop measurement: of Weft's variants weft-bare, which prices observability, and the
     * two that price mTLS (weft-mtls against weft-off); the peers with and without TLS on the link.
     */
    static final List<String> HOP_PLANES = List.of("direct", "weft", "weft-mtls", "weft-off", "weft-bare", "weft-1w",
            "nginx", "nginx-tls", "haproxy", "haproxy-tls", "caddy");

    /**
     * @param sections         any of mesh, hop, jmh
     * @param planes           data planes, see {@link #ALL_PLANES}
     * @param connections      load levels of the mesh experiment
     * @param rounds           times each measurement is repeated (medians are reported)
     * @param warmup           unrecorded load before each measured load
     * @param firstWarmup      extra unrecorded load right after a topology starts, before its first measured load:
     *                         fresh JVMs compile their hot code in their first tens of seconds, and that CPU would
     *                         otherwise be charged to the first load level
     * @param jitSettle        at most this much more unrecorded load after a topology starts, in steps, until its
     *                         proxies' JIT compilers use under {@link JitSettle#SETTLED_SHARE} of their CPU (zero: no
     *                         such wait); see {@link JitSettle}
     * @param duration         each mesh measurement
     * @param hopConnections   connections of the saturated per-hop load
     * @param hopDuration      each per-hop measurement
     * @param sidecarJvm       the Weft sidecars' JVM options (heap, collector...)
     * @param loadThreads      the load generator's threads (event loops, or wrk's {@code -t})
     * @param generator        what drives the load: the built-in generator or wrk
     * @param capacities       each mesh provider's capacity (small, medium, large): the requests it holds at once,
     *                         registered by its sidecar and enforced by every plane's provider-side proxy
     * @param proxyThreads     thread counts every proxied plane is run at, each in turn ({@link
     *                         DataPlane#withThreads}); empty runs each proxy at its own default
     * @param providerDelay    each provider's simulated work in the mesh section (the paper: 50 ms); shorter
     *                         raises the ceiling so that the proxies, not the providers, limit the rate
     * @param results          the folder this run writes into
     * @param keepLogs         keep every process's log under results/logs
     * @param installPeers     install missing peers with apt-get when running as root
     * @param jmhQuick         shorter JMH iterations
     * @param mainClass        the children's main class (tests use a stand-in)
     * @param out              progress lines; null for silence
     */
    public record Settings(Set<String> sections, List<String> planes, List<Integer> connections, int rounds,
                           Duration warmup, Duration firstWarmup, Duration jitSettle, Duration duration,
                           Duration providerDelay, int hopConnections,
                           Duration hopDuration,
                           List<String> sidecarJvm, int loadThreads, Generator generator, List<Integer> capacities,
                           List<Integer> proxyThreads, Path results, boolean keepLogs,
                           boolean installPeers, boolean jmhQuick, String mainClass, PrintStream out) {
        public Settings {
            sections = Set.copyOf(sections);
            planes = List.copyOf(planes);
            connections = List.copyOf(connections);
            sidecarJvm = List.copyOf(sidecarJvm);
            capacities = List.copyOf(capacities);
            proxyThreads = List.copyOf(new LinkedHashSet<>(proxyThreads));
            Objects.requireNonNull(results, "results");
            Objects.requireNonNull(generator, "generator");
            if (providerDelay.isNegative()) {
                throw new IllegalArgumentException("provider delay must be zero or more (got " + providerDelay + ")");
            }
            if (capacities.size() != Experiment.PROVIDERS.size() || capacities.stream().anyMatch(c -> c < 1)) {
                throw new IllegalArgumentException("capacities must be " + Experiment.PROVIDERS.size()
                        + " positive numbers, for the small, medium and large provider, e.g. 100,200,300 (got "
                        + capacities + ")");
            }
            if (proxyThreads.stream().anyMatch(t -> t < 1)) {
                throw new IllegalArgumentException("proxy threads must be positive numbers, e.g. 1,2 (got "
                        + proxyThreads + ")");
            }
            for (String s : sections) {
                if (!List.of("mesh", "hop", "jmh").contains(s)) {
                    throw new IllegalArgumentException("unknown section '" + s + "' (expected mesh, hop or jmh)");
                }
            }
            for (String p : planes) {
                if (!ALL_PLANES.contains(p)) {
                    throw new IllegalArgumentException("unknown data plane '" + p + "' (expected one of "
                            + String.join(", ", ALL_PLANES) + ")");
                }
            }
            if (rounds < 1) {
                throw new IllegalArgumentException("rounds must be at least 1 (got " + rounds + ")");
            }
            if (connections.isEmpty() || connections.stream().anyMatch(c -> c < 1)) {
                throw new IllegalArgumentException("connections must be positive numbers (got " + connections + ")");
            }
            if (hopConnections < 1) {
                throw new IllegalArgumentException("hop connections must be at least 1 (got " + hopConnections + ")");
            }
        }
    }

    private final Settings settings;
    private final PrintStream log;
    private final long started = System.nanoTime();
    private int done;
    private int total;
    private final List<String> notes = new ArrayList<>();

    private Bench(Settings settings, PrintStream log) {
        this.settings = settings;
        this.log = log;
    }

    /** Runs the sections asked for and writes the results folder; returns what it wrote. */
    public static BenchReport run(Settings settings) throws IOException, InterruptedException {
        Files.createDirectories(settings.results());
        try (PrintStream log = new PrintStream(Files.newOutputStream(settings.results().resolve("bench.log")), true,
                StandardCharsets.UTF_8)) {
            return new Bench(settings, log).execute();
        }
    }

    /** One data plane at one thread count: what a round starts, measures and stops. */
    record PlaneRun(String plane, int threads) {}

    private BenchReport execute() throws IOException, InterruptedException {
        BenchReport report = new BenchReport(settings, ProcStats.machineDescription());
        requireGenerator();
        List<String> planes = usablePlanes();
        List<PlaneRun> mesh = settings.sections().contains("mesh") ? runs(planes, settings.proxyThreads()) : List.of();
        List<PlaneRun> hop = settings.sections().contains("hop")
                ? runs(planes.stream().filter(HOP_PLANES::contains).toList(), settings.proxyThreads()) : List.of();
        total = settings.rounds() * (mesh.size() * settings.connections().size() + hop.size());
        progress(String.format(Locale.ROOT, "%d measurements of %s + %s each (%s, %s generator%s), results in %s",
                total, Durations.format(settings.warmup()), Durations.format(settings.duration()),
                settings.rounds() + " round" + (settings.rounds() == 1 ? "" : "s"), settings.generator().label(),
                settings.proxyThreads().isEmpty() ? "" : ", proxies on " + settings.proxyThreads().stream()
                        .map(String::valueOf).collect(Collectors.joining(" and ")) + " thread(s)",
                settings.results()));
        report.loadAverageAtStart(ProcStats.loadAverage());
        for (int round = 1; round <= settings.rounds(); round++) {
            for (PlaneRun run : rotate(mesh, round - 1)) {
                report.addAll(runTopology("mesh", run, round, settings.connections()));
            }
            for (PlaneRun run : rotate(hop, round - 1)) {
                report.addAll(runTopology("hop", run, round, List.of(settings.hopConnections())));
            }
        }
        if (settings.sections().contains("jmh")) {
            progress("JMH microbenchmarks (codec, balancer, hot path) with -prof gc");
            try {
                report.jmh(JmhRunner.run(settings.results(), settings.jmhQuick(), log));
            } catch (RuntimeException e) {
                notes.add("JMH failed: " + e);
                progress("JMH failed: " + e);
                e.printStackTrace(log);
            }
        }
        report.loadAverageAtEnd(ProcStats.loadAverage());
        notes.forEach(report::note);
        report.write();
        progress("done in " + Durations.format(elapsed()) + "; " + settings.results().resolve("summary.md"));
        return report;
    }

    /**
     * Each plane at each of the thread counts asked for, thread count by thread count, each once: a plane whose
     * count is fixed ({@code direct} has no proxy, {@code weft-1w} one Worker) runs only once.
     */
    static List<PlaneRun> runs(List<String> planes, List<Integer> proxyThreads) {
        List<Integer> counts = proxyThreads.isEmpty() ? List.of(DataPlane.OWN_DEFAULT_THREADS) : proxyThreads;
        Set<PlaneRun> runs = new LinkedHashSet<>();
        for (int threads : counts) {
            for (String plane : planes) {
                runs.add(new PlaneRun(plane, dataPlane(plane, List.of(), threads).threads()));
            }
        }
        return List.copyOf(runs);
    }

    /**
     * Starts one data plane's topology, measures each load on it, stops it. A topology that does not come up is
     * recorded as failed rows, and the run goes on with the next data plane.
     */
    private List<BenchRow> runTopology(String section, PlaneRun run, int round, List<Integer> loads)
            throws InterruptedException {
        List<BenchRow> rows = new ArrayList<>();
        String plane = run.plane();
        String label = plane + (run.threads() > 0 ? " ×" + run.threads() : "");
        Path runDir = settings.results().resolve("logs").resolve(section + "-" + plane
                + (run.threads() > 0 ? "-t" + run.threads() : "") + "-round" + round);
        ExperimentSettings experiment = experimentSettings(section, run, runDir);
        Experiment running;
        try {
            progress(String.format(Locale.ROOT, "round %d/%d  %-4s %-13s starting", round, settings.rounds(),
                    section, label));
            running = Experiment.start(experiment);
        } catch (ExperimentException e) {
            progress("  " + label + " did not start: " + firstLine(e.getMessage()) + " (logs: " + runDir + ")");
            log.println(e.getMessage());
            for (int c : loads) {
                done++;
                rows.add(BenchRow.failed(section, plane, run.threads(), round, c, firstLine(e.getMessage())));
            }
            return rows;
        }
        try (running) {
            boolean first = true;
            for (int c : loads) {
                done++;
                try {
                    Duration duration = section.equals("hop") ? settings.hopDuration() : settings.duration();
                    Duration warmup = first ? settings.warmup().plus(settings.firstWarmup()) : settings.warmup();
                    Duration unrecorded = warmup;
                    if (first && !settings.jitSettle().isZero()) {
                        JitSettle.Outcome settled = running.settleJit(c, settings.jitSettle());
                        log.println(label + " round " + round + ": " + settled.describe());
                        unrecorded = unrecorded.plus(settled.took());
                    }
                    first = false;
                    ExperimentResult result = running.measure(c, warmup, duration);
                    BenchRow row = BenchRow.of(section, plane, run.threads(), round, result, unrecorded);
                    rows.add(row);
                    progress(line(round, row));
                    if (row.errors() > 0) {
                        running.keepLogs();
                        notes.add(section + " " + label + " round " + round + " at " + c + " connections had "
                                + result.load().errors().describe() + "; its logs are in " + runDir);
                    }
                } catch (RuntimeException e) {
                    progress("  " + label + " " + c + " connections failed: " + e);
                    e.printStackTrace(log);
                    rows.add(BenchRow.failed(section, plane, run.threads(), round, c, e.toString()));
                }
            }
        }
        return rows;
    }

    private ExperimentSettings experimentSettings(String section, PlaneRun run, Path runDir) {
        boolean hop = section.equals("hop");
        return ExperimentSettings.defaults()
                .withMainClass(settings.mainClass())
                .withRunDir(runDir)
                .withKeepLogs(settings.keepLogs())
                .withLoadThreads(settings.loadThreads())
                .withOut(log)
                .withDataPlane(dataPlane(run.plane(), settings.sidecarJvm(), run.threads()))
                .withShape(hop ? Experiment.Shape.HOP : Experiment.Shape.MESH)
                .withProviderDelay(settings.providerDelay())
                .withProviderCapacities(settings.capacities())
                .withGenerator(settings.generator());
    }

    /** The data plane a name in {@link #ALL_PLANES} stands for, with its proxies on {@code threads} threads. */
    static DataPlane dataPlane(String name, List<String> sidecarJvm, int threads) {
        DataPlane plane = dataPlane(name, sidecarJvm);
        return threads > 0 ? plane.withThreads(threads) : plane;
    }

    /** The data plane a name in {@link #ALL_PLANES} stands for. */
    static DataPlane dataPlane(String name, List<String> sidecarJvm) {
        return switch (name) {
            case "direct" -> new DirectDataPlane();
            case "weft" -> new WeftDataPlane("weft", "event-loop", null, sidecarJvm);
            case "weft-vt" -> new WeftDataPlane("weft-vt", "virtual-thread", null, sidecarJvm);
            case "weft-http1" -> new WeftDataPlane("weft-http1", "event-loop", "http1", sidecarJvm);
            // Observability off: the same-run baseline for the observability overhead (issue 6's 5% budget).
            case "weft-bare" -> new WeftDataPlane("weft-bare", "event-loop", null, sidecarJvm,
                    List.of("--tracing", "off", "--metrics", "off"));
            // Each half of observability alone, to see which one costs what weft-bare saves.
            case "weft-notrace" -> new WeftDataPlane("weft-notrace", "event-loop", null, sidecarJvm,
                    List.of("--tracing", "off"));
            case "weft-nometrics" -> new WeftDataPlane("weft-nometrics", "event-loop", null, sidecarJvm,
                    List.of("--metrics", "off"));
            // Every trace sampled and exported, as the default was until session 10: prices the sampler.
            case "weft-trace-all" -> new WeftDataPlane("weft-trace-all", "event-loop", null, sidecarJvm,
                    List.of("--trace-sample", "1"));
            case "weft-1w" -> new WeftDataPlane("weft-1w", "event-loop", null, sidecarJvm, List.of("--workers", "1"));
            // HAProxy's and nginx's balancing (a smooth weighted rotation) in place of the default p2c-peak-ewma:
            // separates what the balancer does to the mesh's waves from what the rest of the sidecar does.
            case "weft-wrr" -> new WeftDataPlane("weft-wrr", "event-loop", null, sidecarJvm,
                    List.of("--balancer", "weighted-round-robin"));
            // One WMP connection per peer and Worker instead of two: a loop turn's frames to a peer in one write, and
            // one connection per peer to read on the other side.
            case "weft-mc1" -> new WeftDataPlane("weft-mc1", "event-loop", null, sidecarJvm,
                    List.of("--mesh-connections", "1"));
            // Issue 13: mTLS on the mesh link as users run it (strict, a join token per sidecar), and the same
            // sidecars with TLS off, the baseline that prices it in the same run.
            case "weft-mtls" -> new WeftDataPlane("weft-mtls", "event-loop", null, sidecarJvm).withMtls("strict");
            case "weft-off" -> new WeftDataPlane("weft-off", "event-loop", null, sidecarJvm).withMtls("off");
            default -> PeerDataPlane.named(name);
        };
    }

    /** What the link between the two proxy roles of a plane is, for the tables. */
    static String link(String plane) {
        return switch (plane) {
            case "direct" -> "none";
            case "weft-mtls" -> "WMP over mutual TLS 1.3";
            case "weft-http1" -> "HTTP/1.1, plaintext";
            case "nginx-tls", "haproxy-tls" -> "HTTP/1.1 over mutual TLS 1.3";
            case "weft-off" -> "WMP, plaintext (--mtls off)";
            default -> plane.startsWith("weft") ? "WMP, plaintext (--mtls off; the join token only registers)" : "HTTP/1.1, plaintext";
        };
    }

    /**
     * With {@code --generator wrk}, wrk must be there: installed with apt-get as peers are (as root, unless told not
     * to), otherwise the run stops before any topology starts, saying how to install it. Its script is copied into
     * the results folder, so the run can be repeated by hand.
     */
    private void requireGenerator() throws InterruptedException, IOException {
        if (settings.generator() != Generator.WRK) {
            return;
        }
        if (!PeerDataPlane.onPath("wrk") && settings.installPeers() && isRoot()) {
            progress("installing wrk with apt-get (running as root)");
            install(List.of("wrk"));
        }
        if (!PeerDataPlane.onPath("wrk")) {
            String how = "apt-get update && apt-get install -y wrk";
            throw new IllegalStateException("--generator wrk needs wrk, which is not installed. Install with: "
                    + (isRoot() ? how : "sudo sh -c '" + how + "'") + " (or use --generator builtin)");
        }
        WrkGenerator.writeScript(settings.results());
    }

    /**
     * The planes that can run: peers missing from the machine are installed (as root) or left out with a note
     * saying exactly how to install them; weft-http1 is left out when the sidecar has no {@code --mesh-protocol}.
     */
    private List<String> usablePlanes() throws InterruptedException {
        List<PeerDataPlane.Peer> peers = settings.planes().stream().filter(p -> !p.startsWith("weft") && !p.equals("direct"))
                .map(p -> PeerDataPlane.named(p).peer()).distinct().toList();
        Set<String> unusable = new LinkedHashSet<>();
        List<PeerDataPlane.Peer> missing = PeerDataPlane.missing(peers);
        if (!missing.isEmpty() && settings.installPeers() && isRoot()) {
            progress("installing " + names(missing) + " with apt-get (running as root)");
            install(missing.stream().map(PeerDataPlane.Peer::aptPackage).toList());
            missing = PeerDataPlane.missing(missing);
        }
        if (!missing.isEmpty()) {
            String how = "apt-get update && apt-get install -y " + String.join(" ",
                    missing.stream().map(PeerDataPlane.Peer::aptPackage).toList());
            String note = names(missing) + " not installed, left out of this run. Install with: "
                    + (isRoot() ? how : "sudo sh -c '" + how + "'") + " (or leave them out with --planes)";
            progress(note);
            notes.add(note);
            missing.forEach(p -> unusable.add(p.label()));
        }
        if (settings.planes().contains("weft-http1") && !sidecarHasFlag("--mesh-protocol")) {
            String note = "weft-http1 left out: this build's sidecar has no --mesh-protocol flag (./weft sidecar --help)";
            progress(note);
            notes.add(note);
            unusable.add("weft-http1");
        }
        return settings.planes().stream().filter(p -> !unusable.contains(p)
                && !unusable.contains(p.replaceFirst(PeerDataPlane.TLS_SUFFIX + "$", ""))).toList();
    }

    private boolean sidecarHasFlag(String flag) throws InterruptedException {
        List<String> command = ChildJvm.command(List.of(), settings.mainClass(), List.of("sidecar", "--help"));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String help = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            return help.contains(flag);
        } catch (IOException e) {
            return false;
        }
    }

    private void install(List<String> packages) throws InterruptedException {
        // Try without refreshing first (fast when the lists are current), then refresh and try again.
        if (!apt(packages)) {
            runLogged(List.of("apt-get", "update"));
            apt(packages);
        }
    }

    private boolean apt(List<String> packages) throws InterruptedException {
        List<String> command = new ArrayList<>(List.of("apt-get", "install", "-y", "--no-install-recommends"));
        command.addAll(packages);
        return runLogged(command);
    }

    private boolean runLogged(List<String> command) throws InterruptedException {
        log.println("# " + String.join(" ", command));
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().put("DEBIAN_FRONTEND", "noninteractive");
            Process p = builder.start();
            p.getInputStream().transferTo(log);
            return p.waitFor(15, TimeUnit.MINUTES) && p.exitValue() == 0;
        } catch (IOException e) {
            log.println(e);
            return false;
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static String names(List<PeerDataPlane.Peer> peers) {
        return String.join(", ", peers.stream().map(PeerDataPlane.Peer::label).toList());
    }

    static <T> List<T> rotate(List<T> list, int by) {
        if (list.isEmpty()) {
            return list;
        }
        int shift = by % list.size();
        List<T> rotated = new ArrayList<>(list.subList(shift, list.size()));
        rotated.addAll(list.subList(0, shift));
        return rotated;
    }

    private String line(int round, BenchRow r) {
        return String.format(Locale.ROOT,
                "round %d/%d  %-4s %-13s %4d conns  qps %8.1f  p99 %8.2f ms  errors %d  proxy CPU %s µs/req  busy %.0f%%",
                round, settings.rounds(), r.section(), r.plane() + (r.threads() > 0 ? " ×" + r.threads() : ""),
                r.connections(), r.qps(), r.p99Ms(), r.errors(),
                Double.isNaN(r.proxyCpuUsPerReq()) ? "-" : String.format(Locale.ROOT, "%.1f", r.proxyCpuUsPerReq()),
                r.machineBusyPct());
    }

    /** One progress line: where the run is, how long it has taken and about how long is left. */
    private void progress(String what) {
        String line = String.format(Locale.ROOT, "bench [%3d/%d %s%s] %s", done, total,
                Durations.format(Duration.ofSeconds(elapsed().toSeconds())), eta(), what);
        log.println(line);
        if (settings.out() != null) {
            settings.out().println(line);
        }
    }

    private String eta() {
        if (done == 0 || done >= total) {
            return "";
        }
        long left = elapsed().toSeconds() * (total - done) / done;
        return ", ~" + (left >= 60 ? (left / 60) + "m" : left + "s") + " left";
    }

    private Duration elapsed() {
        return Duration.ofNanos(System.nanoTime() - started);
    }

    private static String firstLine(String message) {
        return message == null ? "" : message.lines().findFirst().orElse("");
    }
}
