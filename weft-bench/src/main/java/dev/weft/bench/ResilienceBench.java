package dev.weft.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;

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
 * <p>Threads: everything runs on the caller's thread except the load generators' event loops and, in
 * {@code burst}, the second generator's thread.
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
                           String outboundLimit, Path results, Experiment.Settings experiment, String mainClass,
                           PrintStream out) {}

    /** One figure of one scenario: a row of the CSV and a line of the Markdown. */
    public record Figure(String scenario, String metric, double value, String unit, String note) {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private final Settings settings;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Figure> figures = new ArrayList<>();
    private final Map<String, String> summaries = new LinkedHashMap<>();
    private Experiment experiment;

    private ResilienceBench(Settings settings) {
        this.settings = settings;
    }

    /** Runs the chosen scenarios and returns their figures; {@link #write} puts them on disk. */
    public static ResilienceBench run(Settings settings) throws ExperimentException, InterruptedException {
        ResilienceBench bench = new ResilienceBench(settings);
        List<String> onMain = SCENARIOS.stream().filter(s -> !s.equals("unequal") && settings.scenarios().contains(s))
                .toList();
        if (!onMain.isEmpty()) {
            try (Experiment e = Experiment.start(settings.experiment())) {
                bench.experiment = e;
                if (!bench.inboundYaml().isEmpty()) {
                    bench.apply("bench-0-inbound", "services:\n  provider:\n" + bench.inboundYaml());
                }
                for (String s : onMain) {
                    bench.say("scenario " + s);
                    switch (s) {
                        case "slow" -> bench.slow();
                        case "app-crash" -> bench.appCrash();
                        case "kill" -> bench.kill();
                        case "burst" -> bench.burst();
                        case "policy" -> bench.policy();
                        case "timeout" -> bench.timeout();
                        case "outage" -> bench.outage();
                        default -> throw new IllegalStateException(s);
                    }
                }
            }
        }
        if (settings.scenarios().contains("unequal")) {
            bench.say("scenario unequal");
            bench.unequal();
        }
        return bench;
    }

    public List<Figure> figures() {
        return List.copyOf(figures);
    }

    // --- the scenarios ---

    /** (a) The largest provider becomes 10x slower for a phase: p99 and goodput before, during, after. */
    private void slow() throws InterruptedException {
        String victim = "large";
        Timeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> {
            at.accept(1, () -> fault(victim, "factor=10"));
            at.accept(2, () -> fault(victim, "factor=1"));
        });
        Timeline.Window before = t.phase(0);
        Timeline.Window during = t.phase(1);
        Timeline.Window after = t.phase(2);
        String s = "slow";
        add(s, "p99 before", before.p99(), "ms", "consumer, whole phase");
        add(s, "p99 during", during.p99(), "ms", "provider '" + victim + "' 10x slower (500 ms)");
        add(s, "p99 after", after.p99(), "ms", "");
        add(s, "goodput before", before.goodput(), "req/s", "");
        add(s, "goodput during", during.goodput(), "req/s", "");
        add(s, "goodput during / before", during.goodput() / before.goodput() * 100, "%", "issue target: at least 90%");
        add(s, "time to recover p99", t.recoverySeconds(1, before.p99() * 1.5), "s",
                "from the slowdown to the first second after which every second's p99 is within 1.5x of p99 before");
        add(s, "failed requests", before.errors() + during.errors() + after.errors(), "", "all three phases");
        common(s, t);
    }

    /** (b1) One provider app is killed with SIGKILL; its sidecar stays and refuses for it. */
    private void appCrash() throws InterruptedException {
        String victim = "small";
        long pid = experiment.providerPids().get(victim);
        Map<String, Double> before = scrape("consumer");
        Timeline t = runWithTimeline(settings.connections(), 2, (at, clock) -> at.accept(1, () -> kill9(pid)));
        Map<String, Double> after = scrape("consumer");
        String s = "app-crash";
        add(s, "failed requests", t.phase(1).errors(), "", "after SIGKILL of provider app '" + victim + "'");
        add(s, "failed requests before", t.phase(0).errors(), "", "");
        add(s, "goodput during / before", t.phase(1).goodput() / t.phase(0).goodput() * 100, "%", "");
        add(s, "retries", delta(before, after, "weft_upstream_retries_total{upstream=\"provider\"}"), "",
                "consumer sidecar: requests sent again elsewhere (502 with x-weft-unprocessed from the dead app's sidecar)");
        add(s, "ejections", delta(before, after, k -> k.startsWith("weft_endpoint_ejections_total{upstream=\"provider\""))
                , "", "outlier detection at the consumer sidecar");
        common(s, t);
    }

    /** (b2) One whole provider instance (app and sidecar) is killed with SIGKILL under load. */
    private void kill() throws InterruptedException {
        String victim = "medium";
        long appPid = experiment.providerPids().get(victim);
        long sidecarPid = experiment.proxies().stream().filter(p -> p.name().equals("sidecar-provider-" + victim))
                .findFirst().orElseThrow().pid();
        String endpointKey = "weft_endpoint_requests_total{upstream=\"provider\",endpoint=\"provider-" + victim + "\"}";
        AtomicReference<Quiet> movedAway = new AtomicReference<>(new Quiet(Double.NaN, 0, Double.NaN));
        Timeline t = runWithTimeline(settings.connections(), 2, (at, clock) -> at.accept(1, () -> {
            long killed = System.nanoTime();
            kill9(sidecarPid);
            kill9(appPid);
            movedAway.set(timeUntilQuiet(endpointKey, killed, clock.endOfPhase(1)));
        }));
        String s = "kill";
        add(s, "failed requests", t.phase(1).errors(), "", "after SIGKILL of provider '" + victim + "' (app + sidecar)");
        Quiet q = movedAway.get();
        add(s, "traffic moved away", q.movedAway(), "s", "SIGKILL to the end of the last 50 ms in which the consumer "
                + "sidecar sent more than " + PROBE_MAX + " requests to the dead endpoint (its "
                + "weft_endpoint_requests_total, read every 50 ms)");
        add(s, "probes after that", q.probes(), "", Double.isNaN(q.lastProbe()) ? "none"
                : "single requests outlier detection lets through to see if the endpoint is back (refused, so "
                + "retried elsewhere); the last at " + String.format(Locale.ROOT, "%.2f s", q.lastProbe()));
        add(s, "goodput during / before", t.phase(1).goodput() / t.phase(0).goodput() * 100, "%", "");
        common(s, t);
    }

    /** (c) A second load of {@code burstConnections} joins for a phase: what is shed, how long the rest waits. */
    private void burst() throws InterruptedException {
        Map<String, Double> consumerBefore = scrape("consumer");
        Map<String, Double> providersBefore = scrape("provider");
        AtomicReference<LoadResult> burstResult = new AtomicReference<>();
        double[] maxQueue = {0, 0};
        double[] outboundLimit = {Double.NaN, Double.NaN};
        Timeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> at.accept(1, () -> {
            Thread burst = Thread.ofPlatform().name("burst-load").start(() -> {
                try {
                    burstResult.set(experiment.load(settings.burstConnections(), Duration.ZERO, settings.phase(),
                            new LoadGenerator.PhaseListener() {}));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long end = clock.endOfPhase(1);
            while (System.nanoTime() < end || burst.isAlive()) {
                maxQueue[0] = Math.max(maxQueue[0], sum(scrape("consumer"), k -> k.startsWith("weft_upstream_queue_depth")));
                maxQueue[1] = Math.max(maxQueue[1], sum(scrape("provider"), k -> k.startsWith("weft_app_queue_depth")));
                Map<String, Double> consumer = scrape("consumer");
                if (!consumer.isEmpty()) { // a scrape that timed out on a saturated machine is no reading
                    double limit = sum(consumer, k -> k.startsWith("weft_upstream_concurrency_limit{upstream=\"provider\""));
                    outboundLimit[0] = Double.isNaN(outboundLimit[0]) ? limit : Math.min(outboundLimit[0], limit);
                    outboundLimit[1] = Double.isNaN(outboundLimit[1]) ? limit : Math.max(outboundLimit[1], limit);
                }
                sleep(200);
            }
        }));
        Map<String, Double> consumerAfter = scrape("consumer");
        Map<String, Double> providersAfter = scrape("provider");
        LoadResult b = burstResult.get();
        String s = "burst";
        int total = settings.connections() + settings.burstConnections();
        add(s, "connections during", total, "", settings.connections() + " steady + " + settings.burstConnections()
                + " burst; the providers hold 3 x 200");
        add(s, "p99 accepted, steady load, before", t.phase(0).p99(), "ms", "");
        add(s, "p99 accepted, steady load, during", t.phase(1).p99(), "ms", "");
        add(s, "p99 accepted, burst load", b == null ? Double.NaN : b.latency().p99Ms(), "ms", "");
        add(s, "goodput during", t.phase(1).goodput() + (b == null ? 0 : b.successes() / seconds(b)), "req/s",
                "both loads");
        add(s, "failed, steady load", t.phase(1).errors(), "", "");
        add(s, "failed, burst load", b == null ? Double.NaN : b.errors().total(), "", b == null ? "" : b.errors().describe());
        add(s, "shed at consumer sidecar", delta(consumerBefore, consumerAfter,
                k -> k.startsWith("weft_upstream_rejected_total{upstream=\"provider\"")), "",
                "503 outbound-limit (the learned limit), or no-capacity (queue full or queue timeout, 5 s)");
        add(s, "outbound limit during, lowest", outboundLimit[0], "", "weft_upstream_concurrency_limit at the consumer "
                + "sidecar, read every 200 ms; 0 = no outbound limit");
        add(s, "outbound limit during, highest", outboundLimit[1], "", "");
        add(s, "shed at provider sidecars", delta(providersBefore, providersAfter,
                k -> k.startsWith("weft_app_shed_total") || k.startsWith("weft_app_rejected_total")), "",
                "503 inbound-limit or app-at-capacity");
        add(s, "max queue depth, consumer sidecar", maxQueue[0], "", "weft_upstream_queue_depth, read every 200 ms; bound --queue-size 2048");
        add(s, "max queue depth, provider sidecars", maxQueue[1], "", "weft_app_queue_depth, summed");
        add(s, "p99 after", t.phase(2).p99(), "ms", "");
        common(s, t);
    }

    /** (e) A short timeout is applied and one provider hangs: timeouts fire, and cancellation frees the hung app. */
    private void timeout() throws InterruptedException {
        String victim = "large";
        // Named to sort after bench-policy: of two documents naming a service, the one sorting last applies.
        apply("bench-timeout", """
                services:
                  provider:
                    timeout: %dms
                """.formatted(settings.timeout().toMillis()) + inboundYaml());
        int port = experiment.providerPorts().get(victim);
        Map<String, Double> consumerBefore = scrape("consumer");
        Map<String, Double> providersBefore = scrape("provider");
        double[] maxHeld = {0};
        double[] freedAfter = {Double.NaN};
        Timeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> {
            at.accept(1, () -> {
                fault(victim, "stall=true");
                long end = clock.endOfPhase(1);
                while (System.nanoTime() < end) {
                    maxHeld[0] = Math.max(maxHeld[0], providerInFlight(port));
                    sleep(100);
                }
            });
            at.accept(2, () -> {
                // Held requests are never answered now; only their cancellation (timeout → CANCEL) frees them.
                fault(victim, "stall=false");
                long lifted = System.nanoTime();
                while (providerInFlight(port) > 0 && System.nanoTime() < clock.endOfPhase(2)) {
                    sleep(50);
                }
                if (providerInFlight(port) == 0) {
                    freedAfter[0] = (System.nanoTime() - lifted) / 1e9;
                }
            });
        });
        Map<String, Double> consumerAfter = scrape("consumer");
        Map<String, Double> providersAfter = scrape("provider");
        String s = "timeout";
        add(s, "timeouts", delta(consumerBefore, consumerAfter, "weft_upstream_timeouts_total{upstream=\"provider\"}"),
                "", "consumer sidecar, answered 504");
        add(s, "streams cancelled at providers", delta(providersBefore, providersAfter,
                "weft_requests_total{service=\"provider\",direction=\"inbound\",status_class=\"4xx\"}"), "",
                "inbound 499s at the provider sidecars: the caller's CANCEL closed the app connection");
        add(s, "max requests held by the hung app", maxHeld[0], "", "its /stats inFlight, read every 100 ms");
        add(s, "hung app's in-flight back to 0", freedAfter[0], "s", "after the stall was lifted (held requests are "
                + "never answered: only cancellation frees them)");
        add(s, "failed requests during", t.phase(1).errors(), "", "");
        add(s, "p99 during", t.phase(1).p99(), "ms", "");
        common(s, t);
    }

    /**
     * (f) {@code weft apply} under load: no failed request, time until every sidecar applied it. The change is one
     * every sidecar must take (a route and a longer timeout for the provider, a different outlier threshold) and
     * leaves retries as they were, so the scenarios after it run with the default retry policy.
     */
    private void policy() throws InterruptedException {
        double[] applied = {Double.NaN, Double.NaN, Double.NaN};
        Timeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> at.accept(1, () -> {
            long start = System.nanoTime();
            applied[1] = apply("bench-policy", """
                    services:
                      provider:
                        timeout: 20s
                        outlier-detection: {consecutive-failures: 6}
                        routes:
                          - name: root
                            match: {path-prefix: /}
                    """ + inboundYaml());
            long stored = System.nanoTime();
            while (!allApplied("bench-policy") && System.nanoTime() < clock.endOfPhase(2)) {
                sleep(20);
            }
            if (allApplied("bench-policy")) {
                long now = System.nanoTime();
                applied[0] = (now - start) / 1e9;
                applied[2] = (now - stored) / 1e9;
            }
        }));
        String s = "policy";
        add(s, "failed requests", t.phase(0).errors() + t.phase(1).errors() + t.phase(2).errors(), "", "all phases");
        add(s, "time until applied everywhere, from apply's start", applied[0], "s", "to every sidecar's /config "
                + "listing the document (polled every 20 ms)");
        add(s, "weft apply wall time", applied[1], "s", "the apply command's own JVM, start to exit (document stored)");
        add(s, "time until applied everywhere, after apply exited", applied[2], "s", "0 when every sidecar had it "
                + "before the command's JVM exited");
        add(s, "p99 before", t.phase(0).p99(), "ms", "");
        add(s, "p99 during", t.phase(1).p99(), "ms", "");
        add(s, "p99 after", t.phase(2).p99(), "ms", "");
        common(s, t);
    }

    /** (d) Every provider app crashes: the load reaching the service, and what the retry budget refused. */
    private void outage() throws InterruptedException {
        Map<String, Double> c0 = new LinkedHashMap<>();
        Map<String, Double> p0 = new LinkedHashMap<>();
        Map<String, Double> c1 = new LinkedHashMap<>();
        Map<String, Double> p1 = new LinkedHashMap<>();
        Map<String, Double> c2 = new LinkedHashMap<>();
        Map<String, Double> p2 = new LinkedHashMap<>();
        long[] stamps = new long[3];
        Timeline t = runWithTimeline(settings.connections(), 2, (at, clock) -> {
            at.accept(0, () -> {
                stamps[0] = System.nanoTime();
                c0.putAll(scrape("consumer"));
                p0.putAll(scrape("provider"));
            });
            at.accept(1, () -> {
                stamps[1] = System.nanoTime();
                c1.putAll(scrape("consumer"));
                p1.putAll(scrape("provider"));
                for (String name : experiment.providerPorts().keySet()) {
                    fault(name, "crash=true");
                }
                sleep(Math.max(0, (clock.endOfPhase(1) - System.nanoTime()) / 1_000_000 - 300));
                stamps[2] = System.nanoTime();
                c2.putAll(scrape("consumer"));
                p2.putAll(scrape("provider"));
            });
        });
        double sBefore = (stamps[1] - stamps[0]) / 1e9;
        double sDuring = (stamps[2] - stamps[1]) / 1e9;
        ToDoubleFunction<Map<String, Double>> requests = m -> sum(m,
                k -> k.startsWith("weft_requests_total{service=\"consumer\",direction=\"outbound\""));
        ToDoubleFunction<Map<String, Double>> attempts = m -> sum(m,
                k -> k.startsWith("weft_requests_total{service=\"provider\",direction=\"inbound\""));
        String s = "outage";
        double reqBefore = (requests.applyAsDouble(c1) - requests.applyAsDouble(c0)) / sBefore;
        double reqDuring = (requests.applyAsDouble(c2) - requests.applyAsDouble(c1)) / sDuring;
        double attBefore = (attempts.applyAsDouble(p1) - attempts.applyAsDouble(p0)) / sBefore;
        double attDuring = (attempts.applyAsDouble(p2) - attempts.applyAsDouble(p1)) / sDuring;
        add(s, "requests/s from the consumer, before", reqBefore, "req/s", "consumer sidecar outbound");
        add(s, "requests/s from the consumer, during", reqDuring, "req/s", "closed loop: fast failures come back sooner");
        add(s, "attempts/s reaching the provider sidecars, before", attBefore, "req/s", "");
        add(s, "attempts/s reaching the provider sidecars, during", attDuring, "req/s", "");
        add(s, "attempts per request, during", attDuring / reqDuring, "", "without a budget up to 3 (retries.attempts)");
        add(s, "retries, during", delta(c1, c2, "weft_upstream_retries_total{upstream=\"provider\"}"), "", "");
        add(s, "retry budget exhausted, during", delta(c1, c2,
                "weft_upstream_retry_budget_exhausted_total{upstream=\"provider\"}"), "", "retries refused by the budget");
        add(s, "failed requests, during", t.phase(1).errors(), "", "every request fails: no provider app is left");
        common(s, t);
    }

    /**
     * (g) Providers of speed 1:2:3 (delay x3, x1.5, x1), 512 connections: the default (p2c-peak-ewma, no weights)
     * against weighted configurations, each on a fresh topology in this run.
     */
    private void unequal() throws ExperimentException, InterruptedException {
        WeftDataPlane base = settings.experiment().dataPlane() instanceof WeftDataPlane w ? w : WeftDataPlane.defaults();
        // The default is measured second: the run's first topology also warms the bench's own load generator, and
        // that should not always count against the default.
        List<WeftDataPlane> planes = List.of(
                base.balancing("p2c-peak-ewma, weights 1:2:3", true, null),
                base.balancing("adaptive default, no weights", false, null),
                base.balancing("weighted-round-robin, weights 1:2:3", true, "weighted-round-robin"));
        Map<String, LoadResult> results = new LinkedHashMap<>();
        for (WeftDataPlane plane : planes) {
            say("unequal: " + plane.name());
            try (Experiment e = Experiment.start(settings.experiment().withDataPlane(plane))) {
                experiment = e;
                if (!inboundYaml().isEmpty()) {
                    apply("bench-0-inbound", "services:\n  provider:\n" + inboundYaml());
                }
                fault("small", "factor=3");
                fault("medium", "factor=1.5");
                // Fresh JVMs: three warm-ups' worth, so the comparison is not of JIT compilers.
                results.put(plane.name(), e.load(settings.compareConnections(), settings.warmup().multipliedBy(3),
                        settings.phase().multipliedBy(2), new LoadGenerator.PhaseListener() {}));
            } finally {
                experiment = null;
            }
        }
        String s = "unequal";
        double best = 0;
        String bestName = null;
        for (Map.Entry<String, LoadResult> r : results.entrySet()) {
            LoadResult l = r.getValue();
            add(s, r.getKey() + ": goodput", l.successes() / seconds(l), "req/s", settings.compareConnections()
                    + " connections");
            add(s, r.getKey() + ": p99", l.latency().p99Ms(), "ms", "");
            add(s, r.getKey() + ": failed", l.errors().total(), "", l.errors().describe());
            if (!r.getKey().startsWith("adaptive") && l.successes() / seconds(l) > best) {
                best = l.successes() / seconds(l);
                bestName = r.getKey();
            }
        }
        LoadResult adaptive = results.get(planes.get(1).name());
        add(s, "adaptive default / best weighted", adaptive.successes() / seconds(adaptive) / best * 100, "%",
                "goodput; best weighted: " + bestName + "; issue target: at least 95%");
    }

    // --- running a scenario ---

    /** Acts at the start of phase {@code n} (0-based) of a scenario; the action runs on the scenario's thread. */
    private interface At {
        void accept(int phase, Action action);
    }

    private interface Action {
        void run() throws InterruptedException;
    }

    /** When each phase ends, for actions that last a phase. */
    private interface Clock {
        long endOfPhase(int phase);
    }

    private interface Script {
        void plan(At at, Clock clock);
    }

    /**
     * Runs the load for {@code phases} phases after the warm-up, and the script's actions at their phases' starts
     * (in phase order, each after the previous returned). The load keeps running throughout.
     */
    private Timeline runWithTimeline(int connections, int phases, Script script) throws InterruptedException {
        Timeline timeline = new Timeline();
        Duration phase = settings.phase();
        List<Map.Entry<Integer, Action>> actions = new ArrayList<>();
        AtomicReference<long[]> starts = new AtomicReference<>();
        Clock clock = n -> starts.get()[0] + (n + 1) * phase.toNanos();
        script.plan((n, a) -> actions.add(Map.entry(n, a)), clock);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread driver = Thread.ofPlatform().name("scenario-driver").unstarted(() -> {
            try {
                while (starts.get() == null) {
                    TimeUnit.MILLISECONDS.sleep(5);
                }
                for (Map.Entry<Integer, Action> a : actions) {
                    long at = starts.get()[0] + a.getKey() * phase.toNanos();
                    sleepUntil(at);
                    timeline.mark(a.getKey(), System.nanoTime());
                    a.getValue().run();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                failure.set(e);
            }
        });
        driver.start();
        Map<String, Double> consumerBefore = scrape("consumer");
        Map<String, Double> providersBefore = scrape("provider");
        LoadResult result = experiment.load(connections, settings.warmup(), phase.multipliedBy(phases),
                new LoadGenerator.PhaseListener() {
                    @Override
                    public void measurementStarting() {
                        long now = System.nanoTime();
                        timeline.start(now, phase.toNanos(), phases);
                        starts.set(new long[] {now});
                    }

                    @Override
                    public void second(LoadGenerator.Tick tick) {
                        timeline.add(tick);
                    }
                });
        driver.join(TimeUnit.SECONDS.toMillis(30));
        if (driver.isAlive()) {
            driver.interrupt();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("scenario action failed: " + failure.get().getMessage(), failure.get());
        }
        timeline.result(result);
        timeline.meshErrors = "consumer sidecar: " + kinds(consumerBefore, scrape("consumer")) + "; provider sidecars: "
                + kinds(providersBefore, scrape("provider"));
        return timeline;
    }

    /** Answers the sidecars made themselves during a scenario, by {@code x-weft-error} kind (counters that rose). */
    private static String kinds(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> byKind = new java.util.TreeMap<>();
        java.util.regex.Pattern kind = java.util.regex.Pattern.compile("kind=\"([^\"]+)\"");
        after.forEach((series, v) -> {
            if (series.startsWith("weft_route_mesh_errors_total")) {
                double d = v - before.getOrDefault(series, 0.0);
                java.util.regex.Matcher m = kind.matcher(series);
                if (d > 0 && m.find()) {
                    byKind.merge(m.group(1), d, Double::sum);
                }
            }
        });
        if (byKind.isEmpty()) {
            return "none";
        }
        StringBuilder sb = new StringBuilder();
        byKind.forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append(' ').append(format(v)));
        return sb.toString();
    }

    /** What every scenario reports besides its own figures: how its requests failed, and who answered them. */
    private void common(String scenario, Timeline t) {
        add(scenario, "failed requests, whole scenario", t.result.errors().total(), "", t.result.errors().describe());
        add(scenario, "answers made by sidecars", Double.NaN, "", t.meshErrors);
        summaries.put(scenario, t.render());
    }

    // --- the topology's surfaces ---

    /** {@code POST /fault?QUERY} to a provider app. */
    private void fault(String provider, String query) {
        int port = experiment.providerPorts().get(provider);
        try {
            http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/fault?" + query))
                    .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding());
            say("provider " + provider + ": fault " + query);
        } catch (IOException e) {
            // A crash answers nothing: the connection just ends.
            say("provider " + provider + ": fault " + query + " (" + e.getClass().getSimpleName() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void kill9(long pid) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // SIGKILL on Linux
        say("SIGKILL pid " + pid);
    }

    private double providerInFlight(int port) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/stats"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body()).get("inFlight").asDouble();
        } catch (IOException e) {
            return Double.NaN;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Double.NaN;
        }
    }

    /** Every live sidecar's admin {@code HOST:PORT} for a service, as registered (endpoint metadata "admin"). */
    private List<String> admins(String service) {
        String registry = experiment.registry().replaceFirst("^weft://", "http://");
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(registry + "/v1/services/" + service))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            List<String> out = new ArrayList<>();
            for (JsonNode e : JSON.readTree(r.body()).path("endpoints")) {
                String admin = e.path("metadata").path("admin").asText(null);
                if (admin != null) {
                    out.add(admin);
                }
            }
            return out;
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** The /metrics samples of every sidecar of a service, summed by series. */
    private Map<String, Double> scrape(String service) {
        Map<String, Double> all = new LinkedHashMap<>();
        for (String admin : admins(service)) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + admin + "/metrics"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                for (String line : r.body().split("\n")) {
                    if (line.isEmpty() || line.startsWith("#")) {
                        continue;
                    }
                    int sp = line.lastIndexOf(' ');
                    try {
                        all.merge(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)), Double::sum);
                    } catch (NumberFormatException | StringIndexOutOfBoundsException ignored) {
                        // not a sample line
                    }
                }
            } catch (IOException e) {
                // a sidecar just killed: it has nothing more to say
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return all;
    }

    /**
     * Seconds from {@code since} to the last rise of a consumer-sidecar counter, watched until {@code until}: when
     * the consumer stopped sending to a dead endpoint.
     */
    /** At most this many requests in 50 ms to a dead endpoint count as probes, not as traffic. */
    private static final int PROBE_MAX = 2;

    /**
     * When the traffic to an endpoint stopped, told apart from the probes after it.
     *
     * @param movedAway seconds from {@code since} to the end of the last 50 ms with more than {@link #PROBE_MAX}
     *                  requests
     * @param probes    requests after that, in windows of at most {@link #PROBE_MAX}
     * @param lastProbe seconds from {@code since} to the last of those, NaN if none
     */
    record Quiet(double movedAway, int probes, double lastProbe) {}

    private Quiet timeUntilQuiet(String series, long since, long until) throws InterruptedException {
        double last = scrape("consumer").getOrDefault(series, 0.0);
        long movedAway = since;
        int probes = 0;
        long lastProbe = 0;
        while (System.nanoTime() < until) {
            TimeUnit.MILLISECONDS.sleep(50);
            double v = scrape("consumer").getOrDefault(series, 0.0);
            long now = System.nanoTime();
            if (v - last > PROBE_MAX) {
                movedAway = now;
                probes = 0; // what looked like probes was still traffic
                lastProbe = 0;
            } else if (v > last) {
                probes += (int) (v - last);
                lastProbe = now;
            }
            last = v;
        }
        return new Quiet((movedAway - since) / 1e9, probes, lastProbe == 0 ? Double.NaN : (lastProbe - since) / 1e9);
    }

    /**
     * The provider's inbound limit in the policies the bench applies (a document naming a service replaces all of
     * that service's policy, so each one must say it again).
     */
    private String inboundYaml() {
        return (settings.adaptiveInbound() ? "    concurrency-limit: {adaptive: true}\n" : "")
                + (settings.outboundLimit() == null ? ""
                : "    outbound-limit: {adaptive: " + settings.outboundLimit().equals("on") + "}\n");
    }

    /** Runs {@code weft apply} as its own process (as a user would); returns its wall time in seconds. */
    private double apply(String name, String yaml) throws InterruptedException {
        try {
            Path file = Files.createTempFile(experiment.runDir(), name, ".yaml");
            Files.writeString(file, yaml);
            List<String> command = new ArrayList<>(List.of(Experiment.javaExecutable()));
            command.addAll(Experiment.CHILD_JVM_FLAGS);
            command.addAll(List.of("-cp", Experiment.absoluteClassPath(), settings.mainClass(), "apply", "-f",
                    file.toString(), "--name", name, "--registry", experiment.registry()));
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(experiment.runDir().resolve("apply-" + name + ".log").toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("weft apply " + name + " did not finish within 60 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("weft apply " + name + " exited " + p.exitValue() + ": "
                        + Files.readString(experiment.runDir().resolve("apply-" + name + ".log")));
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            say("weft apply " + name + " done in " + String.format(Locale.ROOT, "%.2f s", wall));
            return wall;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run weft apply: " + e.getMessage(), e);
        }
    }

    /** Whether every consumer and provider sidecar lists the policy document {@code name} in its /config. */
    private boolean allApplied(String name) {
        List<String> admins = new ArrayList<>(admins("consumer"));
        admins.addAll(admins("provider"));
        for (String admin : admins) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + admin + "/config"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                boolean listed = false;
                for (JsonNode d : JSON.readTree(r.body()).path("policies").path("documents")) {
                    listed |= d.asText().equals(name);
                }
                if (!listed) {
                    return false;
                }
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return !admins.isEmpty();
    }

    // --- arithmetic ---

    private static double delta(Map<String, Double> before, Map<String, Double> after, String series) {
        return after.getOrDefault(series, 0.0) - before.getOrDefault(series, 0.0);
    }

    private static double delta(Map<String, Double> before, Map<String, Double> after,
                                java.util.function.Predicate<String> series) {
        return sum(after, series) - sum(before, series);
    }

    private static double sum(Map<String, Double> m, java.util.function.Predicate<String> series) {
        double s = 0;
        for (Map.Entry<String, Double> e : m.entrySet()) {
            if (series.test(e.getKey())) {
                s += e.getValue();
            }
        }
        return s;
    }

    private static double seconds(LoadResult r) {
        return r.measured().toNanos() / 1e9;
    }

    private static void sleep(long millis) throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(millis);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    private void add(String scenario, String metric, double value, String unit, String note) {
        figures.add(new Figure(scenario, metric, value, unit, note));
    }

    private void say(String line) {
        if (settings.out() != null) {
            settings.out().println("resilience: " + line);
        }
    }

    // --- the report ---

    /**
     * Writes resilience.md and resilience.csv (resilience-adaptive-inbound.* with the adaptive inbound limit) into
     * {@code settings.results()}; returns the Markdown.
     */
    public String write(String conditions) throws IOException {
        Files.createDirectories(settings.results());
        StringBuilder md = new StringBuilder("# Resilience scenarios\n\n").append(conditions).append("\n\n");
        StringBuilder csv = new StringBuilder("scenario,metric,value,unit,note\n");
        String current = null;
        for (Figure f : figures) {
            if (!f.scenario().equals(current)) {
                current = f.scenario();
                md.append("\n## ").append(current).append("\n\n| metric | value | note |\n|---|---|---|\n");
            }
            md.append("| ").append(f.metric()).append(" | ").append(format(f.value())).append(f.unit().isEmpty() ? ""
                    : " " + f.unit()).append(" | ").append(f.note()).append(" |\n");
            csv.append(csvField(f.scenario())).append(',').append(csvField(f.metric())).append(',')
                    .append(format(f.value())).append(',').append(csvField(f.unit())).append(',')
                    .append(csvField(f.note())).append('\n');
        }
        if (!summaries.isEmpty()) {
            md.append("\n## Time lines (one line a second after the warm-up: ok/s, errors/s, p99 ms)\n");
            summaries.forEach((k, v) -> md.append("\n### ").append(k).append("\n\n```\n").append(v).append("```\n"));
        }
        String base = settings.adaptiveInbound() ? "resilience-adaptive-inbound" : "resilience";
        Files.writeString(settings.results().resolve(base + ".md"), md);
        Files.writeString(settings.results().resolve(base + ".csv"), csv);
        return md.toString();
    }

    private static String format(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        return v == Math.rint(v) && Math.abs(v) < 1e12 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String csvField(String s) {
        return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }

    /** The seconds of one scenario's load, split in phases of equal length after the warm-up. */
    static final class Timeline {
        private final List<LoadGenerator.Tick> ticks = new CopyOnWriteArrayList<>();
        private final Map<Integer, Long> marks = new java.util.concurrent.ConcurrentHashMap<>();
        private volatile long start;
        private volatile long phaseNanos;
        private volatile int phases;
        private LoadResult result;
        private String meshErrors = "";

        void start(long nanoTime, long phaseNanos, int phases) {
            this.start = nanoTime;
            this.phaseNanos = phaseNanos;
            this.phases = phases;
        }

        void add(LoadGenerator.Tick tick) {
            ticks.add(tick);
        }

        void mark(int phase, long nanoTime) {
            marks.put(phase, nanoTime);
        }

        void result(LoadResult r) {
            result = r;
        }

        /** The ticks whose interval ended inside phase {@code n}, merged. */
        Window phase(int n) {
            long from = start + n * phaseNanos;
            long to = from + phaseNanos;
            Histogram h = new Histogram(LoadStats.MAX_MICROS, 2);
            long ok = 0;
            long errors = 0;
            double seconds = 0;
            for (LoadGenerator.Tick t : ticks) {
                long middle = t.endNanos() - (long) (t.seconds() * 5e8);
                if (middle >= from && middle < to) {
                    ok += t.ok();
                    errors += t.errors();
                    seconds += t.seconds();
                    h.add(t.latencyMicros());
                }
            }
            return new Window(ok, errors, seconds, h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e3);
        }

        /**
         * Seconds from the start of phase {@code n} to the start of the first second after which every second of
         * that phase has a p99 at or under {@code threshold}; NaN when it never settles.
         */
        double recoverySeconds(int n, double threshold) {
            long from = start + n * phaseNanos;
            long to = from + phaseNanos;
            long settled = -1;
            for (LoadGenerator.Tick t : ticks) {
                long middle = t.endNanos() - (long) (t.seconds() * 5e8);
                if (middle < from || middle >= to) {
                    continue;
                }
                if (t.p99Millis() > threshold) {
                    settled = -1;
                } else if (settled < 0) {
                    settled = t.endNanos() - (long) (t.seconds() * 1e9);
                }
            }
            return settled < 0 ? Double.NaN : Math.max(0, (settled - from) / 1e9);
        }

        /** One line a second from the measured start: offset, ok/s, errors/s, p50, p99. */
        String render() {
            StringBuilder sb = new StringBuilder(" t(s)   ok/s  err/s   p50ms   p99ms\n");
            for (LoadGenerator.Tick t : ticks) {
                if (t.endNanos() <= start) {
                    continue;
                }
                double at = (t.endNanos() - start) / 1e9;
                String mark = "";
                for (Map.Entry<Integer, Long> m : marks.entrySet()) {
                    long ms = m.getValue();
                    if (ms > t.endNanos() - t.seconds() * 1e9 && ms <= t.endNanos()) {
                        mark = "   <- phase " + (m.getKey() + 1) + " action";
                    }
                }
                sb.append(String.format(Locale.ROOT, "%5.1f %6.0f %6.0f %7.1f %7.1f%s%n", at, t.ok() / t.seconds(),
                        t.errors() / t.seconds(), t.p50Millis(), t.p99Millis(), mark));
            }
            return sb.toString();
        }

        /**
         * @param ok      successes in the window
         * @param errors  failures in the window
         * @param seconds its length
         * @param p99     p99 latency of its successes, ms
         */
        record Window(long ok, long errors, double seconds, double p99) {
            double goodput() {
                return seconds == 0 ? Double.NaN : ok / seconds;
            }
        }
    }
}
