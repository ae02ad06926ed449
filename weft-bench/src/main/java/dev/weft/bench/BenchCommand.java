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
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code weft bench}: every data plane side by side on the paper's experiment, per hop, and JMH. See docs/benchmarks.md. */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        subcommands = ResilienceCommand.class,
        description = {"Run the paper's mesh experiment with Weft, nginx, HAProxy, Caddy (as both sidecars) and direct",
                "side by side, the per-hop cost of each proxy, and the JMH microbenchmarks. Writes summary.md, CSV files",
                "and mesh-chart.svg into a results folder. Missing peers are installed with apt-get when run as root.",
                "The defaults (3 rounds, 5 s warm-up, 10 s per load) take about 35 minutes; --quick about 8.",
                "'weft bench resilience' runs the fault scenarios instead (docs/resilience.md)."})
public final class BenchCommand implements Callable<Integer> {
    @Option(names = "--quick", description = "One round, 2 s warm-up, 5 s per load, short JMH: a first look, not stable medians.")
    boolean quick;

    @Option(names = "--sections", split = ",", paramLabel = "LIST", defaultValue = "mesh,hop,jmh",
            description = "Which parts to run: mesh, hop, jmh (default: ${DEFAULT-VALUE}).")
    List<String> sections;

    @Option(names = "--planes", split = ",", paramLabel = "LIST",
            defaultValue = "direct,weft,weft-bare,weft-vt,weft-http1,nginx,haproxy,caddy",
            description = "Data planes (default: ${DEFAULT-VALUE}).")
    List<String> planes;

    @Option(names = "--connections", split = ",", paramLabel = "LIST", defaultValue = "128,256,512",
            description = "Load levels of the mesh experiment (default: ${DEFAULT-VALUE}).")
    List<Integer> connections;

    @Option(names = "--rounds", paramLabel = "N", description = "Repetitions; tables show medians (default: 3; --quick: 1).")
    Integer rounds;

    @Option(names = "--warmup", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Unrecorded load before each measured load (default: 5s; --quick: 2s).")
    Duration warmup;

    @Option(names = "--first-warmup", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Extra warm-up before a topology's first load, while fresh JVMs compile (default: 15s; --quick: 5s).")
    Duration firstWarmup;

    @Option(names = "--duration", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Each measured mesh load (default: 10s; --quick: 5s).")
    Duration duration;

    @Option(names = "--hop-connections", defaultValue = "64", paramLabel = "N",
            description = "Connections of the saturated per-hop load (default: ${DEFAULT-VALUE}).")
    int hopConnections;

    @Option(names = "--hop-duration", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Each measured per-hop load (default: 10s; --quick: 5s).")
    Duration hopDuration;

    @Option(names = "--sidecar-jvm", paramLabel = "OPTIONS",
            description = "JVM options of the Weft sidecars (default: the sidecar's own, from sidecar-jvm.options, "
                    + "with the AOT cache ./weft trained; other options run without the cache).")
    String sidecarJvm;

    @Option(names = "--threads", paramLabel = "N", description = "Load generator event loops (default: the number of CPUs).")
    Integer threads;

    @Option(names = "--results", paramLabel = "DIR",
            description = "Folder for this run's files (default: bench-results/DATE-TIME under the current directory).")
    Path results;

    @Option(names = "--keep-logs", description = "Keep every process's log under the results folder (always kept on failure).")
    boolean keepLogs;

    @Option(names = "--no-install", description = "Never install missing peers; leave them out and say how to install them.")
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
        BenchReport report = Bench.run(settings);
        System.out.print(report.markdown());
        boolean anyOk = report.rows().stream().anyMatch(BenchRow::ok) || !report.jmhResults().isEmpty();
        return anyOk ? 0 : 1;
    }

    Bench.Settings settings() {
        Path dir = results != null ? results : Path.of("bench-results",
                LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--results " + dir + " is a file (expected a folder)");
        }
        List<String> jvm = SidecarJvm.options();
        if (sidecarJvm != null) {
            jvm = new ArrayList<>(List.of(sidecarJvm.trim().split("\\s+")));
            jvm.removeIf(String::isEmpty);
        }
        return new Bench.Settings(new LinkedHashSet<>(sections), planes, connections,
                rounds != null ? rounds : quick ? 1 : 3,
                warmup != null ? warmup : Duration.ofSeconds(quick ? 2 : 5),
                firstWarmup != null ? firstWarmup : Duration.ofSeconds(quick ? 5 : 15),
                duration != null ? duration : Duration.ofSeconds(quick ? 5 : 10),
                hopConnections,
                hopDuration != null ? hopDuration : Duration.ofSeconds(quick ? 5 : 10),
                jvm, threads != null ? threads : Runtime.getRuntime().availableProcessors(), dir.toAbsolutePath(),
                keepLogs, !noInstall, quick, Experiment.WEFT_CLI_MAIN, System.err);
    }
}
