package dev.weft.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * The fault scenarios of issue 4, measured on the paper's topology with real processes ({@link Experiment}: control
 * plane, three providers with their sidecars, the consumer with its sidecar, the load generator in this process):
 *
 * <ol>
 *   <li>{@code slow}: one provider becomes 10x slower under load, then recovers;</li>
 *   <li>{@code burst}: a second load far above capacity joins for a while;</li>
 *   <li>{@code policy}: a policy change ({@code weft apply}) under load;</li>
 *   <li>{@code timeout}: a short timeout is applied and one provider hangs;</li>
 *   <li>{@code app-crash}: one provider app is killed with SIGKILL (its sidecar stays);</li>
 *   <li>{@code kill}: another whole provider instance (app and sidecar) is killed with SIGKILL;</li>
 *   <li>{@code outage}: every provider app crashes (a total outage of the service);</li>
 *   <li>{@code unequal}: providers of speed 1:2:3, the adaptive default without weights against weighted
 *       configurations, each on a fresh topology, in the same run.</li>
 * </ol>
 *
 * Each scenario runs a closed-loop load with a time line (one {@link LoadGenerator.Tick} a second) and acts on the
 * topology on its own clock: phases "before", "during" and "after" of {@code phase} each. The sidecars' own counters
 * ({@code /metrics}, read from the admin addresses they registered) say what the mesh decided. The report is
 * Markdown and CSV ({@link #write}). The scenarios run in the order above on one topology: the destructive ones
 * come last, and the policies applied stay (the timeout scenario's short timeout is in force during the outage);
 * {@code unequal} starts its own.
 *
 * <p>The scenarios themselves are {@link ResilienceScenarios}; how a scenario's load and actions are timed,
 * {@link ScenarioTimeline}; what they do to the topology and read from it, {@link MeshControls}; the report,
 * {@link ResilienceReport}.
 *
 * <p>Threads: everything runs on the caller's thread except the load generators' event loops, each scenario's
 * actions (on its timeline's driver thread) and, in {@code burst}, the second generator's thread.
 */
public final class ResilienceBench {
    public static final List<String> SCENARIOS = List.of("slow", "burst", "policy", "timeout", "app-crash", "kill",
            "outage", "unequal");

    /**
     * @param scenarios          which of {@link #SCENARIOS} to run
     * @param connections        the load of every scenario but {@code unequal}
     * @param burstConnections   the extra load of {@code burst}
     * @param compareConnections the load of {@code unequal} (the issue: 512)
     * @param warmup             unrecorded load before each scenario
     * @param phase              each phase of a scenario
     * @param results            where resilience.md and resilience.csv go
     * @param timeout            the timeout the timeout scenario applies (above the load's normal p99)
     * @param adaptiveInbound    apply {@code concurrency-limit: {adaptive: true}} to the providers first (and in
     *                           every policy the scenarios apply); false keeps the sidecars' default
     * @param outboundLimit      {@code on} or {@code off}: apply {@code outbound-limit: {adaptive: ...}} for the
     *                           consumer's calls to the providers the same way; null keeps the sidecars' default
     * @param experiment         the topology's settings (Weft's data plane; its load settings are not used)
     */
    public record Settings(Set<String> scenarios, int connections, int burstConnections, int compareConnections,
                           Duration warmup, Duration phase, Duration timeout, boolean adaptiveInbound,
                           String outboundLimit, Path results, ExperimentSettings experiment, String mainClass,
                           PrintStream out) {}

    /** One figure of one scenario: a row of the CSV and a line of the Markdown. */
    public record Figure(String scenario, String metric, double value, String unit, String note) {}


    private final Settings settings;
    private final ResilienceScenarios scenarios;

    private ResilienceBench(Settings settings) {
        this.settings = settings;
        this.scenarios = new ResilienceScenarios(settings);
    }

    /** Runs the chosen scenarios and returns their figures; {@link #write} puts them on disk. */
    public static ResilienceBench run(Settings settings) throws ExperimentException, InterruptedException {
        ResilienceBench bench = new ResilienceBench(settings);
        List<String> onMain = SCENARIOS.stream().filter(s -> !s.equals("unequal") && settings.scenarios().contains(s))
                .toList();
        if (!onMain.isEmpty()) {
            try (Experiment e = Experiment.start(settings.experiment())) {
                bench.scenarios.useTopology(e);
                for (String s : onMain) {
                    bench.scenarios.run(s);
                }
            }
        }
        if (settings.scenarios().contains("unequal")) {
            bench.scenarios.runUnequal();
        }
        return bench;
    }

    public List<Figure> figures() {
        return scenarios.figures();
    }

    /**
     * Writes resilience.md and resilience.csv (resilience-adaptive-inbound.* with the adaptive inbound limit) into
     * {@code settings.results()}; returns the Markdown.
     */
    public String write(String conditions) throws IOException {
        String base = settings.adaptiveInbound() ? "resilience-adaptive-inbound" : "resilience";
        return ResilienceReport.write(settings.results(), base, conditions, scenarios.figures(),
                scenarios.summaries());
    }
}
