package dev.weft.bench;

import dev.weft.control.cli.DurationConverter;
import dev.weft.dataplane.SidecarJvm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code weft bench observability}: see {@link ObservabilityAb}. */
@Command(name = "observability", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Price observability (metrics, traces, access logs) on one warm mesh: pause and resume it on "
                + "every sidecar, window after window, and compare CPU per request pair by pair (issue 12: within 5%%).",
                "--shape hop prices it on the per-hop pair instead (two sidecars and a backend without delay, "
                + "saturated).",
                "Writes observability.md (the pairs and the verdict) and windows.csv. About 3 minutes per thread count "
                + "at the defaults, plus the JIT's warm-up."})
public final class ObservabilityCommand implements Callable<Integer> {
    @Option(names = "--proxy-threads", split = ",", defaultValue = "1,2", paramLabel = "LIST",
            description = "Workers per sidecar; one topology each (default: ${DEFAULT-VALUE}).")
    List<Integer> proxyThreads;

    @Option(names = "--pairs", defaultValue = "8", paramLabel = "N",
            description = "On/paused pairs of windows per thread count (default: ${DEFAULT-VALUE}).")
    int pairs;

    @Option(names = "--window", defaultValue = "10s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Each measured window (default: ${DEFAULT-VALUE}).")
    Duration window;

    @Option(names = "--gap", defaultValue = "3s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Unrecorded load on fresh connections before each window (default: ${DEFAULT-VALUE}).")
    Duration gap;

    @Option(names = "--shape", defaultValue = "mesh", paramLabel = "NAME",
            description = "mesh (the paper's topology, issue 12's conditions) or hop (the per-hop pair: a consumer-side "
                    + "and a provider-side sidecar in front of one backend without delay, as `weft bench --sections "
                    + "hop`) (default: ${DEFAULT-VALUE}).")
    String shape;

    @Option(names = "--connections", paramLabel = "N",
            description = "Load generator connections (default: 512 for the mesh, 64 per hop, as `weft bench`).")
    Integer connections;

    @Option(names = "--capacities", split = ",", defaultValue = "100,200,300", paramLabel = "LIST",
            description = "Requests each provider (small, medium, large) holds at once (default: ${DEFAULT-VALUE}, "
                    + "issue 12's).")
    List<Integer> capacities;

    @Option(names = "--provider-delay", defaultValue = "10ms", converter = DurationConverter.class,
            paramLabel = "TIME", description = "Each provider's work per request; 10ms saturates this machine kind, "
                    + "as in issue 12's runs since session 9 (default: ${DEFAULT-VALUE}).")
    Duration providerDelay;

    @Option(names = "--jit-settle", defaultValue = "120s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "At most this much load first, until the sidecars' JIT settles (default: ${DEFAULT-VALUE}).")
    Duration jitSettle;

    @Option(names = "--generator", defaultValue = "wrk", paramLabel = "NAME",
            description = "builtin or wrk (from apt, verifying every answer) (default: ${DEFAULT-VALUE}).")
    String generator;

    @Option(names = "--results", paramLabel = "DIR",
            description = "Folder for the results (default: weft-bench/results/DATE-observability when run from the "
                    + "project, else bench-results/DATE-observability).")
    Path results;

    @Option(names = "--keep-logs", description = "Keep every process's log.")
    boolean keepLogs;

    @Override
    public Integer call() throws Exception {
        Experiment.Shape kind;
        try {
            kind = Experiment.Shape.valueOf(shape.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            System.err.println("bench observability: --shape must be mesh or hop (got '" + shape + "')");
            return 2;
        }
        boolean hop = kind == Experiment.Shape.HOP;
        int connections = this.connections != null ? this.connections : hop ? 64 : 512;
        if (pairs < 1 || connections < 1 || window.isZero() || proxyThreads.isEmpty()
                || proxyThreads.stream().anyMatch(t -> t < 1)) {
            System.err.println("bench observability: --pairs, --connections, --window and every --proxy-threads "
                    + "must be positive");
            return 2;
        }
        Generator load = Generator.named(generator);
        Path dir = BenchCommand.resultsFolder(results, LocalDate.now(ZoneOffset.UTC) + "-observability"
                + (hop ? "-hop" : ""));
        Files.createDirectories(dir);
        String when = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        String machine = ProcStats.machineDescription();
        ObservabilityAb.Settings ab = new ObservabilityAb.Settings(kind, connections, pairs, window, gap, jitSettle);
        List<List<ObservabilityAb.Window>> byThreads = new ArrayList<>();
        for (int threads : proxyThreads) {
            ExperimentSettings settings = ExperimentSettings.defaults()
                    .withConnections(connections)
                    .withDuration(window)
                    .withKeepLogs(keepLogs)
                    .withRunDir(dir.resolve("logs").resolve("t" + threads).toAbsolutePath())
                    .withShape(kind)
                    .withProviderDelay(providerDelay)
                    .withProviderCapacities(capacities)
                    .withGenerator(load)
                    .withDataPlane(new WeftDataPlane("weft", "event-loop", null, SidecarJvm.options())
                            .withThreads(threads));
            try (Experiment experiment = Experiment.start(settings)) {
                byThreads.add(ObservabilityAb.run(experiment, ab, threads, System.err));
            } catch (ExperimentException e) {
                System.err.println("bench observability: the " + shape + " at " + threads + " Workers did not start: "
                        + e.getMessage());
                return 1;
            }
        }
        try {
            Files.deleteIfExists(dir.resolve("logs")); // only when empty: each clean topology deleted its own folder
        } catch (java.nio.file.DirectoryNotEmptyException kept) {
            // --keep-logs, or a topology that failed: its logs stay
        }
        String report = ObservabilityAb.report(byThreads, proxyThreads, ab, when, machine);
        Files.writeString(dir.resolve("observability.md"), report);
        Files.writeString(dir.resolve("windows.csv"), ObservabilityAb.csv(byThreads));
        System.out.print(report);
        System.err.println("bench observability: wrote observability.md and windows.csv to " + dir);
        return 0;
    }
}
