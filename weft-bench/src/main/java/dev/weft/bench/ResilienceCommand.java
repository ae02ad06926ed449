package dev.weft.bench;

import dev.weft.registry.support.Durations;
import dev.weft.control.cli.DurationConverter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;

/** {@code weft bench resilience}: the fault scenarios of issue 4 on the paper's topology. See docs/resilience.md. */
@Command(name = "resilience", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the fault scenarios (slow, killed, overloaded, hung providers) on the paper's topology.",
                "Real processes: a provider 10x slower, a provider app and a whole provider killed with SIGKILL, a "
                + "burst above capacity, timeouts with a hung provider, a policy change under load, a total outage, "
                + "and unequal providers without weights against weighted configurations. Writes resilience.md and "
                + "resilience.csv. About 8 minutes at the defaults."})
public final class ResilienceCommand implements Callable<Integer> {

    @Option(names = "--scenarios", split = ",", paramLabel = "LIST",
            defaultValue = "slow,burst,policy,timeout,app-crash,kill,outage,unequal",
            description = "Which scenarios, run in this order (default: ${DEFAULT-VALUE}).")
    List<String> scenarios;

    @Option(names = "--phase", converter = DurationConverter.class, paramLabel = "TIME", defaultValue = "10s",
            description = "Each phase (before, during, after) of a scenario (default: ${DEFAULT-VALUE}).")
    Duration phase;

    @Option(names = "--warmup", converter = DurationConverter.class, paramLabel = "TIME", defaultValue = "5s",
            description = "Unrecorded load before each scenario (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--connections", paramLabel = "N", defaultValue = "128",
            description = "Steady load of the scenarios (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--burst-connections", paramLabel = "N", defaultValue = "1024",
            description = "Extra load of the burst scenario (default: ${DEFAULT-VALUE}).")
    int burstConnections;

    @Option(names = "--compare-connections", paramLabel = "N", defaultValue = "512",
            description = "Load of the unequal-providers comparison (default: ${DEFAULT-VALUE}).")
    int compareConnections;

    @Option(names = "--timeout", converter = DurationConverter.class, paramLabel = "TIME", defaultValue = "3s",
            description = "Timeout the timeout scenario applies, above the load's normal p99 (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--adaptive-inbound", description = "Turn the providers' adaptive inbound concurrency limit on "
            + "(policy concurrency-limit: {adaptive: true}) before the scenarios; default: the sidecars' default (fixed).")
    boolean adaptiveInbound;

    @Option(names = "--outbound-limit", paramLabel = "on|off", description = "Turn the consumer sidecar's adaptive "
            + "outbound limit for the providers on or off (policy outbound-limit: {adaptive: ...}) before the "
            + "scenarios; default: the sidecars' default (on, at the endpoints' capacities).")
    String outboundLimit;

    @Option(names = "--threads", paramLabel = "N", description = "Load generator event loops (default: the number of CPUs).")
    Integer threads;

    @Option(names = "--results", paramLabel = "DIR",
            description = "Folder for resilience.md and resilience.csv (default: weft-bench/results/DATE when run "
                    + "from the project, else bench-results/DATE).")
    Path results;

    @Option(names = "--keep-logs", description = "Keep every process's log (always kept on failure).")
    boolean keepLogs;

    @Override
    public Integer call() throws Exception {
        Set<String> chosen = new LinkedHashSet<>(scenarios);
        for (String s : chosen) {
            if (!ResilienceBench.SCENARIOS.contains(s)) {
                System.err.println("bench resilience: unknown scenario '" + s + "' (expected: "
                        + String.join(", ", ResilienceBench.SCENARIOS) + ")");
                return 2;
            }
        }
        if (outboundLimit != null && !outboundLimit.equals("on") && !outboundLimit.equals("off")) {
            System.err.println("bench resilience: --outbound-limit must be on or off (got '" + outboundLimit + "')");
            return 2;
        }
        Path dir = BenchCommand.resultsFolder(results, LocalDate.now(ZoneOffset.UTC).toString());
        int cpus = Runtime.getRuntime().availableProcessors();
        ExperimentSettings experiment = ExperimentSettings.defaults().withKeepLogs(keepLogs)
                .withLoadThreads(threads != null ? threads : cpus).withOut(System.err);
        double load = ProcStats.loadAverage();
        ResilienceBench bench = ResilienceBench.run(new ResilienceBench.Settings(chosen, connections,
                burstConnections, compareConnections, warmup, phase, timeout, adaptiveInbound, outboundLimit, dir.toAbsolutePath(), experiment,
                Experiment.WEFT_CLI_MAIN, System.err));
        String conditions = String.format(Locale.ROOT, "Run %s UTC on %d CPUs (load average %.2f at the start; "
                        + "other processes may share the machine). Paper topology: control plane, providers small, "
                        + "medium, large (200 concurrent, 50 ms each, weights 1:2:3), their sidecars, the consumer "
                        + "and its sidecar, every one its own JVM; load from this process. Steady load %d connections, "
                        + "warm-up %s, phases of %s. Inbound concurrency limit: %s. Outbound limit: %s.", ZonedDateTime.now(ZoneOffset.UTC).withNano(0).toLocalDateTime(),
                cpus, load, connections, Durations.format(warmup), Durations.format(phase),
                adaptiveInbound ? "adaptive (Gradient2, applied with weft apply before the scenarios)"
                        : "the default (fixed at --capacity 200, with the queue)",
                outboundLimit == null ? "the sidecars' default" : outboundLimit + " (applied with weft apply before the scenarios)");
        System.out.print(bench.write(conditions));
        System.err.println("bench resilience: wrote " + dir.resolve(adaptiveInbound ? "resilience-adaptive-inbound.md"
                : "resilience.md") + " and its .csv");
        return 0;
    }
}
