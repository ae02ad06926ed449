package dev.weft.bench;

import dev.weft.control.cli.DurationConverter;
import dev.weft.dataplane.SidecarJvm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code weft bench}: every data plane side by side on the paper's experiment, per hop, and JMH. See docs/benchmarks.md. */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        subcommands = {ResilienceCommand.class, FootprintCommand.class, SoakCommand.class, ObservabilityCommand.class},
        description = {"Benchmark Weft against nginx, HAProxy and Caddy on the paper's experiment, side by side.",
                "Runs the paper's mesh experiment with Weft, nginx, HAProxy, Caddy (as both sidecars) and direct side by "
                + "side, the per-hop cost of each proxy, and the JMH microbenchmarks. Writes summary.md, CSV files and "
                + "mesh-chart.svg into a results folder. Missing peers (and wrk) are installed with apt-get when run as "
                + "root. The defaults (3 rounds, 5 s warm-up, 10 s per load) take about 35 minutes; --quick about 8.",
                "'--profile issue12' runs issue 12's measuring conditions (about 20 minutes; 40 at --proxy-threads 1,2).",
                "'--profile issue13' runs mTLS on the link at the same conditions, mesh and per hop: weft-mtls, weft-off, "
                + "haproxy-tls, nginx-tls (about 45 minutes).",
                "'weft bench resilience' runs the fault scenarios instead (docs/resilience.md); 'weft bench observability' "
                + "prices observability by pausing it on one warm mesh (docs/benchmarks.md)."})
public final class BenchCommand implements Callable<Integer> {
    static final String DEFAULT_PLANES = "direct,weft,weft-bare,weft-vt,weft-http1,nginx,haproxy,caddy";

    @Option(names = "--quick", description = "One round, 2 s warm-up, 5 s per load, short JMH: a first look, not stable medians.")
    boolean quick;

    @Option(names = "--profile", paramLabel = "NAME",
            description = {"A preset of the options below; options given as well override it. 'issue12': issue 12's "
                    + "measuring conditions, the paper's topology with --sections mesh --planes weft,weft-bare,haproxy,"
                    + "nginx --connections 512 --generator wrk --capacities 100,200,300 --proxy-threads 1 --warmup 30s "
                    + "--first-warmup 0s --jit-settle 120s --duration 20s --rounds 3. Add --proxy-threads 1,2 for the issue's targets "
                    + "at 1 and 2 threads. 'issue13': issue 13's mTLS targets at those conditions, --sections mesh,hop "
                    + "--planes weft-mtls,weft-off,haproxy-tls,nginx-tls (Weft strict with a join token per sidecar, "
                    + "Weft --mtls off, HAProxy and nginx with mutual TLS 1.3 between the two proxies); about 45 "
                    + "minutes."})
    String profile;

    @Option(names = "--sections", split = ",", paramLabel = "LIST",
            description = "Which parts to run: mesh, hop, jmh (default: mesh,hop,jmh).")
    List<String> sections;

    @Option(names = "--planes", split = ",", paramLabel = "LIST",
            description = "Data planes (default: " + DEFAULT_PLANES + ").")
    List<String> planes;

    @Option(names = "--connections", split = ",", paramLabel = "LIST",
            description = "Load levels of the mesh experiment (default: 128,256,512).")
    List<Integer> connections;

    @Option(names = "--generator", paramLabel = "NAME",
            description = "Load generator: builtin (the bench's own, in this JVM) or wrk (from apt, with a Lua script "
                    + "that verifies every answer); both count a wrong answer as an error (default: builtin).")
    String generator;

    @Option(names = "--capacities", split = ",", paramLabel = "LIST",
            description = "Requests each provider (small, medium, large; weights 1:2:3) holds at once, also what its "
                    + "proxy enforces and its sidecar registers as --capacity (default: 200,200,200).")
    List<Integer> capacities;

    @Option(names = "--proxy-threads", split = ",", paramLabel = "LIST",
            description = "Run every proxied plane at each of these thread counts: Weft sidecars with --workers N, "
                    + "HAProxy nbthread N, nginx worker_processes N, Caddy GOMAXPROCS=N; the tables say each row's "
                    + "(default: each proxy's own default).")
    List<Integer> proxyThreads;

    @Option(names = "--rounds", paramLabel = "N", description = "Repetitions; tables show medians (default: 3; --quick: 1).")
    Integer rounds;

    @Option(names = "--warmup", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Unrecorded load before each measured load (default: 5s; --quick: 2s).")
    Duration warmup;

    @Option(names = "--first-warmup", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Extra warm-up before a topology's first load, while fresh JVMs compile (default: 15s; --quick: 5s).")
    Duration firstWarmup;

    @Option(names = "--jit-settle", converter = DurationConverter.class, paramLabel = "TIME",
            description = "After a topology starts, up to this much more unrecorded load, in 5 s steps, until the "
                    + "proxies' JIT compilers use under 5%% of their CPU, so the window measures a warm proxy "
                    + "(default: 0s, none; --profile issue12: 120s).")
    Duration jitSettle;

    @Option(names = "--duration", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Each measured mesh load (default: 10s; --quick: 5s).")
    Duration duration;

    @Option(names = "--provider-delay", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Each provider's simulated work in the mesh experiment (default: 50ms, the paper's). A "
                    + "shorter one raises the ceiling, so that the proxies' CPU, not the providers, limits the rate.")
    Duration providerDelay;

    @Option(names = "--hop-connections", paramLabel = "N",
            description = "Connections of the saturated per-hop load (default: 64).")
    Integer hopConnections;

    @Option(names = "--hop-duration", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Each measured per-hop load (default: 10s; --quick: 5s).")
    Duration hopDuration;

    @Option(names = "--sidecar-jvm", paramLabel = "OPTIONS",
            description = "JVM options of the Weft sidecars (default: the sidecar's own, from sidecar-jvm.options, "
                    + "with the AOT cache ./weft trained; options that differ in more than the heap's sizes or "
                    + "-Dio.netty. properties run without the cache).")
    String sidecarJvm;

    @Option(names = "--threads", paramLabel = "N",
            description = "Load generator threads: the built-in one's event loops, wrk's -t (default: the number of CPUs).")
    Integer threads;

    @Option(names = "--results", paramLabel = "DIR",
            description = "Folder for this run's files (default: bench-results/DATE-TIME under the current directory).")
    Path results;

    @Option(names = "--keep-logs", description = "Keep every process's log under the results folder (always kept on failure).")
    boolean keepLogs;

    @Option(names = "--no-install", description = "Never install missing peers or wrk; leave peers out and say how to install them.")
    boolean noInstall;

    @Override
    public Integer call() throws Exception {
        Bench.Settings settings;
        try {
            settings = settings();
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            return 2;
        }
        BenchReport report;
        try {
            report = Bench.run(settings);
        } catch (IllegalStateException e) {
            System.err.println("bench: " + e.getMessage());
            return 2;
        }
        System.out.print(report.markdown());
        boolean anyOk = report.rows().stream().anyMatch(BenchRow::ok) || !report.jmhResults().isEmpty();
        return anyOk ? 0 : 1;
    }

    /** What a {@code --profile} sets; null leaves an option to {@code --quick} or the defaults. */
    record Profile(List<String> sections, List<String> planes, List<Integer> connections, Generator generator,
                   List<Integer> capacities, List<Integer> proxyThreads, Integer rounds, Duration warmup,
                   Duration firstWarmup, Duration jitSettle, Duration duration) {
        static final Profile NONE = new Profile(null, null, null, null, null, null, null, null, null, null, null);

        /**
         * Issue 12's conditions: wrk verifying every answer, the paper's topology, providers of 100, 200 and 300
         * permits (weights 1:2:3), every proxy on one thread, 30 s warm-up, 20 s measured, medians of 3 rounds.
         * The example consumer already opens a keep-alive connection per concurrent request. Before the warm-up,
         * up to 120 s more until the sidecars' JIT has settled ({@link JitSettle}): with the 30 s alone a third of
         * Weft's measured CPU was compilation.
         */
        static final Profile ISSUE_12 = new Profile(List.of("mesh"), List.of("weft", "weft-bare", "haproxy", "nginx"),
                List.of(512), Generator.WRK, List.of(100, 200, 300), List.of(1), 3, Duration.ofSeconds(30),
                Duration.ZERO, Duration.ofSeconds(120), Duration.ofSeconds(20));

        /**
         * Issue 13's conditions: issue 12's, in both sections, with the TLS planes: Weft's sidecars with mTLS as users
         * run them (strict, a join token each) against the same sidecars with {@code --mtls off}, and HAProxy and
         * nginx with mutual TLS 1.3 between their two proxies.
         */
        static final Profile ISSUE_13 = new Profile(List.of("mesh", "hop"),
                List.of("weft-mtls", "weft-off", "haproxy-tls", "nginx-tls"), ISSUE_12.connections, ISSUE_12.generator,
                ISSUE_12.capacities, ISSUE_12.proxyThreads, ISSUE_12.rounds, ISSUE_12.warmup, ISSUE_12.firstWarmup,
                ISSUE_12.jitSettle, ISSUE_12.duration);

        static Profile named(String name) {
            if (name == null) {
                return NONE;
            }
            return switch (name) {
                case "issue12" -> ISSUE_12;
                case "issue13" -> ISSUE_13;
                default -> throw new IllegalArgumentException("unknown profile '" + name
                        + "' (expected issue12 or issue13)");
            };
        }
    }

    Bench.Settings settings() {
        Profile p = Profile.named(profile);
        if (quick && p != Profile.NONE) {
            throw new IllegalArgumentException("--quick and --profile cannot be combined (a profile sets its own "
                    + "durations; shorten it with --warmup, --duration and --rounds)");
        }
        Path dir = results != null ? results : Path.of("bench-results",
                LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--results " + dir + " is a file (expected a folder)");
        }
        // Read as sidecar-jvm.options is (blanks, # comments), so a value can be pasted from that file.
        List<String> jvm = sidecarJvm != null ? SidecarJvm.parse(sidecarJvm) : SidecarJvm.options();
        return new Bench.Settings(
                new LinkedHashSet<>(pick(sections, p.sections(), List.of("mesh", "hop", "jmh"))),
                pick(planes, p.planes(), List.of(DEFAULT_PLANES.split(","))),
                pick(connections, p.connections(), List.of(128, 256, 512)),
                pick(rounds, p.rounds(), quick ? 1 : 3),
                pick(warmup, p.warmup(), Duration.ofSeconds(quick ? 2 : 5)),
                pick(firstWarmup, p.firstWarmup(), Duration.ofSeconds(quick ? 5 : 15)),
                pick(jitSettle, p.jitSettle(), Duration.ZERO),
                pick(duration, p.duration(), Duration.ofSeconds(quick ? 5 : 10)),
                providerDelay != null ? providerDelay : Duration.ofMillis(50),
                hopConnections != null ? hopConnections : 64,
                hopDuration != null ? hopDuration : Duration.ofSeconds(quick ? 5 : 10),
                jvm, threads != null ? threads : Runtime.getRuntime().availableProcessors(),
                generator != null ? Generator.named(generator) : pick(null, p.generator(), Generator.BUILTIN),
                pick(capacities, p.capacities(), ExperimentSettings.equalCapacities(200)),
                pick(proxyThreads, p.proxyThreads(), List.of()),
                dir.toAbsolutePath(), keepLogs, !noInstall, quick, Experiment.WEFT_CLI_MAIN, System.err);
    }

    /** The option as given, else the profile's, else the default. */
    private static <T> T pick(T given, T fromProfile, T otherwise) {
        return given != null ? given : fromProfile != null ? fromProfile : otherwise;
    }

    /**
     * Where a bench command writes its results: {@code given}, else {@code weft-bench/results/NAME} when run from the
     * project (so results sit beside the earlier ones in git), else {@code bench-results/NAME}.
     */
    static Path resultsFolder(Path given, String name) {
        return given != null ? given
                : Files.isDirectory(Path.of("weft-bench")) ? Path.of("weft-bench", "results", name)
                : Path.of("bench-results", name);
    }
}
