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
import java.util.List;
import java.util.concurrent.Callable;

/** {@code weft bench footprint}: see {@link FootprintBench}. */
@Command(name = "footprint", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Measure one sidecar's start-up and its memory as the mesh grows (issue 15's targets).",
                "Starts a control plane and an app, then sidecars one at a time: time and CPU until /ready, and the "
                + "resident memory of a sidecar calling 3 services in a mesh of 3 services and then of --services. "
                + "Writes footprint.md. About a minute at the defaults."})
public final class FootprintCommand implements Callable<Integer> {
    @Option(names = "--starts", defaultValue = "10", paramLabel = "N",
            description = "Sidecar starts to time (default: ${DEFAULT-VALUE}).")
    int starts;

    @Option(names = "--services", defaultValue = "1000", paramLabel = "N",
            description = "Services in the large mesh, 10 endpoints each (default: ${DEFAULT-VALUE}).")
    int services;

    @Option(names = "--start-timeout", defaultValue = "60s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "How long a sidecar may take to be ready (default: ${DEFAULT-VALUE}).")
    Duration startTimeout;

    @Option(names = "--sidecar-jvm-add", paramLabel = "OPTIONS",
            description = "JVM options added after the sidecar's own and its AOT cache, to measure a lever (JIT "
                    + "thresholds, logging); the JVM refuses the cache, and says so in the sidecar's log, if one of "
                    + "them changes what the cache holds. Repeat it to compare variants: their starts alternate "
                    + "(A, B, A, B...), --starts each; '' is the sidecar as shipped, e.g. --sidecar-jvm-add '' "
                    + "--sidecar-jvm-add '-XX:TieredStopAtLevel=1'.")
    List<String> sidecarJvmAdd;

    @Option(names = "--mtls", defaultValue = "off", paramLabel = "MODE",
            description = "The sidecars' --mtls: off (default: as the bench's other sidecars run) or strict (the "
                    + "sidecar's own default; the start then includes getting a certificate).")
    String mtls;

    @Option(names = "--results", paramLabel = "DIR",
            description = "Folder for footprint.md (default: weft-bench/results/DATE-footprint when run from the "
                    + "project, else bench-results/DATE-footprint).")
    Path results;

    /** One variant per --sidecar-jvm-add, each parsed as sidecar-jvm.options is; none: the sidecar as shipped. */
    List<List<String>> variants() {
        return sidecarJvmAdd == null || sidecarJvmAdd.isEmpty() ? List.of(List.of())
                : sidecarJvmAdd.stream().map(SidecarJvm::parse).toList();
    }

    @Override
    public Integer call() throws Exception {
        if (starts < 1 || services < FootprintBench.CALLED) {
            System.err.println("bench footprint: --starts must be at least 1 and --services at least "
                    + FootprintBench.CALLED);
            return 2;
        }
        if (!mtls.equals("off") && !mtls.equals("strict")) {
            System.err.println("bench footprint: unknown --mtls '" + mtls + "' (expected: off, strict)");
            return 2;
        }
        Path dir = BenchCommand.resultsFolder(results, LocalDate.now(ZoneOffset.UTC) + "-footprint");
        Path runDir = Files.createTempDirectory("weft-footprint-");
        String when = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        FootprintBench.Settings settings = new FootprintBench.Settings(starts, services, startTimeout, runDir,
                line -> System.err.println("bench footprint: " + line),
                variants(), mtls);
        FootprintBench.Result r = FootprintBench.run(settings);
        String report = FootprintBench.report(r, settings, when);
        FootprintBench.write(dir, report);
        System.out.print(report);
        System.err.println("bench footprint: wrote " + dir.resolve("footprint.md") + " (process logs in " + runDir + ")");
        return 0;
    }
}
