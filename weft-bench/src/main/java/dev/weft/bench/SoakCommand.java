package dev.weft.bench;

import dev.weft.control.cli.DurationConverter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code weft bench soak}: see {@link SoakBench}. */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the paper's topology under a steady, moderate load and chart each sidecar's memory, heap, "
                + "file descriptors and threads over time (issue 15: no drift).",
                "Writes soak.md (the verdict), soak.csv (every reading) and soak.svg (the chart). Exits 1 when a "
                + "figure drifted past its limit."})
public final class SoakCommand implements Callable<Integer> {
    @Option(names = "--duration", defaultValue = "30m", converter = DurationConverter.class, paramLabel = "TIME",
            description = "How long the load runs (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--connections", defaultValue = "64", paramLabel = "N",
            description = "Load generator connections; 64 is about an eighth of the demo's load (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--interval", defaultValue = "30s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Time between readings of every sidecar (default: ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(names = "--warmup", paramLabel = "TIME", converter = DurationConverter.class,
            description = "Readings before this are charted but not judged (default: a tenth of --duration, at least 1m"
                    + " when --duration allows).")
    Duration warmup;

    @Option(names = "--results", paramLabel = "DIR",
            description = "Folder for the results (default: weft-bench/results/DATE-soak when run from the project, "
                    + "else bench-results/DATE-soak).")
    Path results;

    @Option(names = "--child-heap", defaultValue = "256m", paramLabel = "SIZE",
            description = "-Xmx of the example apps' and control plane's JVMs (default: ${DEFAULT-VALUE}).")
    String childHeap;

    @Override
    public Integer call() throws Exception {
        if (connections < 1 || interval.isZero() || duration.compareTo(interval.multipliedBy(4)) < 0) {
            System.err.println("bench soak: --connections must be at least 1 and --duration at least 4 intervals");
            return 2;
        }
        Duration judgedFrom = warmup != null ? warmup
                : duration.compareTo(Duration.ofMinutes(10)) >= 0 ? duration.dividedBy(10)
                : Duration.ofSeconds(Math.min(60, duration.toSeconds() / 4));
        Path dir = BenchCommand.resultsFolder(results, LocalDate.now(ZoneOffset.UTC) + "-soak");
        Files.createDirectories(dir);
        String when = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        ExperimentSettings settings = new ExperimentSettings(connections, duration, Duration.ZERO,
                Duration.ofSeconds(5), Runtime.getRuntime().availableProcessors(), null, false, null,
                Duration.ofSeconds(60), Duration.ofMillis(50), ExperimentSettings.equalCapacities(200), childHeap,
                Experiment.WEFT_CLI_MAIN, System.err, WeftDataPlane.defaults(), Experiment.Shape.MESH,
                Generator.BUILTIN);
        SoakBench.Settings soak = new SoakBench.Settings(connections, duration, interval, judgedFrom);
        List<SoakBench.Reading> readings;
        try (Experiment experiment = Experiment.start(settings)) {
            readings = SoakBench.run(experiment, soak, System.getProperty("java.home"));
        } catch (ExperimentException e) {
            System.err.println("bench soak: failed: " + e.getMessage());
            return 1;
        }
        List<SoakBench.Drift> drifts = SoakBench.drifts(readings, judgedFrom);
        String report = SoakBench.report(drifts, soak, when, ProcStats.machineDescription());
        Files.writeString(dir.resolve("soak.md"), report);
        Files.writeString(dir.resolve("soak.csv"), SoakBench.csv(readings));
        Files.writeString(dir.resolve("soak.svg"), SoakChart.render(readings, "Weft sidecars over a "
                + dev.weft.registry.support.Durations.format(duration) + " soak, " + connections + " connections"));
        System.out.print(report);
        System.err.println("bench soak: wrote soak.md, soak.csv and soak.svg to " + dir);
        return drifts.stream().anyMatch(SoakBench.Drift::drifts) ? 1 : 0;
    }
}
