package dev.weft.bench;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;

/**
 * The resilience scenarios themselves ({@link ResilienceBench} lists them and says in what order they run): each runs
 * a load with a time line ({@link ScenarioTimeline}), acts on the topology at the start of its phases through
 * {@link MeshControls}, and turns what it saw into {@link ResilienceBench.Figure}s.
 *
 * <p>Threads: a scenario runs on the caller's thread, its actions on the timeline's driver thread, and in
 * {@code burst} the second load on its own thread.
 */
final class ResilienceScenarios {
    private final ResilienceBench.Settings settings;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<ResilienceBench.Figure> figures = new ArrayList<>();
    private final Map<String, String> summaries = new LinkedHashMap<>();
    private Experiment experiment;
    private MeshControls controls;

    ResilienceScenarios(ResilienceBench.Settings settings) {
        this.settings = settings;
    }

    /**
     * The topology the scenarios run on from now; the providers' inbound policy the bench applies first, if any
     * (see {@link #inboundYaml}).
     */
    void useTopology(Experiment e) throws InterruptedException {
        experiment = e;
        controls = new MeshControls(e, settings.mainClass(), http, this::say);
        if (!inboundYaml().isEmpty()) {
            controls.apply("bench-0-inbound", "services:\n  provider:\n" + inboundYaml());
        }
    }

    /** Runs one scenario of {@link ResilienceBench#SCENARIOS} but {@code unequal} on the topology in use. */
    void run(String scenario) throws InterruptedException {
        say("scenario " + scenario);
        switch (scenario) {
            case "slow" -> slow();
            case "app-crash" -> appCrash();
            case "kill" -> kill();
            case "burst" -> burst();
            case "policy" -> policy();
            case "timeout" -> timeout();
            case "outage" -> outage();
            default -> throw new IllegalStateException(scenario);
        }
    }

    /** Runs {@code unequal}, which starts its own topologies. */
    void runUnequal() throws ExperimentException, InterruptedException {
        say("scenario unequal");
        unequal();
    }

    List<ResilienceBench.Figure> figures() {
        return List.copyOf(figures);
    }

    /** Each scenario's time line, rendered, by scenario in the order they ran. */
    Map<String, String> summaries() {
        return Collections.unmodifiableMap(summaries);
    }

    /** (a) The largest provider becomes 10x slower for a phase: p99 and goodput before, during, after. */
    private void slow() throws InterruptedException {
        String victim = "large";
        ScenarioTimeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> {
            at.accept(1, () -> controls.fault(victim, "factor=10"));
            at.accept(2, () -> controls.fault(victim, "factor=1"));
        });
        ScenarioTimeline.Window before = t.phase(0);
        ScenarioTimeline.Window during = t.phase(1);
        ScenarioTimeline.Window after = t.phase(2);
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
        SidecarScrape before = controls.scrape("consumer");
        ScenarioTimeline t = runWithTimeline(settings.connections(), 2,
                (at, clock) -> at.accept(1, () -> controls.kill9(pid)));
        SidecarScrape after = controls.scrape("consumer");
        String s = "app-crash";
        add(s, "failed requests", t.phase(1).errors(), "", "after SIGKILL of provider app '" + victim + "'");
        add(s, "failed requests before", t.phase(0).errors(), "", "");
        add(s, "goodput during / before", t.phase(1).goodput() / t.phase(0).goodput() * 100, "%", "");
        add(s, "retries", SidecarScrape.delta(before, after, "weft_upstream_retries_total", "upstream", "provider"), "",
                "consumer sidecar: requests sent again elsewhere (502 with x-weft-unprocessed from the dead app's sidecar)");
        add(s, "ejections", SidecarScrape.delta(before, after, "weft_endpoint_ejections_total", "upstream", "provider"),
                "", "outlier detection at the consumer sidecar");
        common(s, t);
    }

    /** (b2) One whole provider instance (app and sidecar) is killed with SIGKILL under load. */
    private void kill() throws InterruptedException {
        String victim = "medium";
        long appPid = experiment.providerPids().get(victim);
        long sidecarPid = experiment.proxies().stream().filter(p -> p.name().equals("sidecar-provider-" + victim))
                .findFirst().orElseThrow().pid();
        AtomicReference<MeshControls.Quiet> movedAway = new AtomicReference<>(
                new MeshControls.Quiet(Double.NaN, 0, Double.NaN));
        ScenarioTimeline t = runWithTimeline(settings.connections(), 2, (at, clock) -> at.accept(1, () -> {
            long killed = System.nanoTime();
            controls.kill9(sidecarPid);
            controls.kill9(appPid);
            movedAway.set(controls.timeUntilQuiet(killed, clock.endOfPhase(1), "upstream", "provider",
                    "endpoint", "provider-" + victim));
        }));
        String s = "kill";
        add(s, "failed requests", t.phase(1).errors(), "", "after SIGKILL of provider '" + victim + "' (app + sidecar)");
        MeshControls.Quiet q = movedAway.get();
        add(s, "traffic moved away", q.movedAway(), "s", "SIGKILL to the end of the last 50 ms in which the consumer "
                + "sidecar sent more than " + MeshControls.PROBE_MAX + " requests to the dead endpoint (its "
                + "weft_endpoint_requests_total, read every 50 ms)");
        add(s, "probes after that", q.probes(), "", Double.isNaN(q.lastProbe()) ? "none"
                : "single requests outlier detection lets through to see if the endpoint is back (refused, so "
                + "retried elsewhere); the last at " + String.format(Locale.ROOT, "%.2f s", q.lastProbe()));
        add(s, "goodput during / before", t.phase(1).goodput() / t.phase(0).goodput() * 100, "%", "");
        common(s, t);
    }

    /** (c) A second load of {@code burstConnections} joins for a phase: what is shed, how long the rest waits. */
    private void burst() throws InterruptedException {
        SidecarScrape consumerBefore = controls.scrape("consumer");
        SidecarScrape providersBefore = controls.scrape("provider");
        AtomicReference<LoadResult> burstResult = new AtomicReference<>();
        double[] maxQueue = {0, 0};
        double[] outboundLimit = {Double.NaN, Double.NaN};
        ScenarioTimeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> at.accept(1, () -> {
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
                maxQueue[0] = Math.max(maxQueue[0], controls.scrape("consumer").sum("weft_upstream_queue_depth"));
                maxQueue[1] = Math.max(maxQueue[1], controls.scrape("provider").sum("weft_app_queue_depth"));
                SidecarScrape consumer = controls.scrape("consumer");
                if (!consumer.isEmpty()) { // a scrape that timed out on a saturated machine is no reading
                    double limit = consumer.sum("weft_upstream_concurrency_limit", "upstream", "provider");
                    outboundLimit[0] = Double.isNaN(outboundLimit[0]) ? limit : Math.min(outboundLimit[0], limit);
                    outboundLimit[1] = Double.isNaN(outboundLimit[1]) ? limit : Math.max(outboundLimit[1], limit);
                }
                sleep(200);
            }
        }));
        SidecarScrape consumerAfter = controls.scrape("consumer");
        SidecarScrape providersAfter = controls.scrape("provider");
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
        add(s, "shed at consumer sidecar", SidecarScrape.delta(consumerBefore, consumerAfter,
                "weft_upstream_rejected_total", "upstream", "provider"), "",
                "503 outbound-limit (the learned limit), or no-capacity (queue full or queue timeout, 5 s)");
        add(s, "outbound limit during, lowest", outboundLimit[0], "", "weft_upstream_concurrency_limit at the consumer "
                + "sidecar, read every 200 ms; 0 = no outbound limit");
        add(s, "outbound limit during, highest", outboundLimit[1], "", "");
        add(s, "shed at provider sidecars", SidecarScrape.delta(providersBefore, providersAfter, "weft_app_shed_total")
                + SidecarScrape.delta(providersBefore, providersAfter, "weft_app_rejected_total"), "",
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
        controls.apply("bench-timeout", """
                services:
                  provider:
                    timeout: %dms
                """.formatted(settings.timeout().toMillis()) + inboundYaml());
        int port = experiment.providerPorts().get(victim);
        SidecarScrape consumerBefore = controls.scrape("consumer");
        SidecarScrape providersBefore = controls.scrape("provider");
        double[] maxHeld = {0};
        double[] freedAfter = {Double.NaN};
        ScenarioTimeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> {
            at.accept(1, () -> {
                controls.fault(victim, "stall=true");
                long end = clock.endOfPhase(1);
                while (System.nanoTime() < end) {
                    maxHeld[0] = Math.max(maxHeld[0], controls.providerInFlight(port));
                    sleep(100);
                }
            });
            at.accept(2, () -> {
                // Held requests are never answered now; only their cancellation (timeout → CANCEL) frees them.
                controls.fault(victim, "stall=false");
                long lifted = System.nanoTime();
                while (controls.providerInFlight(port) > 0 && System.nanoTime() < clock.endOfPhase(2)) {
                    sleep(50);
                }
                if (controls.providerInFlight(port) == 0) {
                    freedAfter[0] = (System.nanoTime() - lifted) / 1e9;
                }
            });
        });
        SidecarScrape consumerAfter = controls.scrape("consumer");
        SidecarScrape providersAfter = controls.scrape("provider");
        String s = "timeout";
        add(s, "timeouts", SidecarScrape.delta(consumerBefore, consumerAfter, "weft_upstream_timeouts_total", "upstream",
                "provider"),
                "", "consumer sidecar, answered 504");
        add(s, "streams cancelled at providers", SidecarScrape.delta(providersBefore, providersAfter,
                "weft_requests_total", "service", "provider", "direction", "inbound", "status_class", "4xx"), "",
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
        ScenarioTimeline t = runWithTimeline(settings.connections(), 3, (at, clock) -> at.accept(1, () -> {
            long start = System.nanoTime();
            applied[1] = controls.apply("bench-policy", """
                    services:
                      provider:
                        timeout: 20s
                        outlier-detection: {consecutive-failures: 6}
                        routes:
                          - name: root
                            match: {path-prefix: /}
                    """ + inboundYaml());
            long stored = System.nanoTime();
            while (!controls.allApplied("bench-policy") && System.nanoTime() < clock.endOfPhase(2)) {
                sleep(20);
            }
            if (controls.allApplied("bench-policy")) {
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
        // Consumer and provider sidecars' counters at the start of each phase and near the end of the outage.
        SidecarScrape none = new SidecarScrape(List.of());
        SidecarScrape[] c = {none, none, none};
        SidecarScrape[] p = {none, none, none};
        long[] stamps = new long[3];
        ScenarioTimeline t = runWithTimeline(settings.connections(), 2, (at, clock) -> {
            at.accept(0, () -> {
                stamps[0] = System.nanoTime();
                c[0] = controls.scrape("consumer");
                p[0] = controls.scrape("provider");
            });
            at.accept(1, () -> {
                stamps[1] = System.nanoTime();
                c[1] = controls.scrape("consumer");
                p[1] = controls.scrape("provider");
                for (String name : experiment.providerPorts().keySet()) {
                    controls.fault(name, "crash=true");
                }
                sleep(Math.max(0, (clock.endOfPhase(1) - System.nanoTime()) / 1_000_000 - 300));
                stamps[2] = System.nanoTime();
                c[2] = controls.scrape("consumer");
                p[2] = controls.scrape("provider");
            });
        });
        double sBefore = (stamps[1] - stamps[0]) / 1e9;
        double sDuring = (stamps[2] - stamps[1]) / 1e9;
        ToDoubleFunction<SidecarScrape> requests = m -> m.sum("weft_requests_total", "service", "consumer",
                "direction", "outbound");
        ToDoubleFunction<SidecarScrape> attempts = m -> m.sum("weft_requests_total", "service", "provider",
                "direction", "inbound");
        String s = "outage";
        double reqBefore = (requests.applyAsDouble(c[1]) - requests.applyAsDouble(c[0])) / sBefore;
        double reqDuring = (requests.applyAsDouble(c[2]) - requests.applyAsDouble(c[1])) / sDuring;
        double attBefore = (attempts.applyAsDouble(p[1]) - attempts.applyAsDouble(p[0])) / sBefore;
        double attDuring = (attempts.applyAsDouble(p[2]) - attempts.applyAsDouble(p[1])) / sDuring;
        add(s, "requests/s from the consumer, before", reqBefore, "req/s", "consumer sidecar outbound");
        add(s, "requests/s from the consumer, during", reqDuring, "req/s", "closed loop: fast failures come back sooner");
        add(s, "attempts/s reaching the provider sidecars, before", attBefore, "req/s", "");
        add(s, "attempts/s reaching the provider sidecars, during", attDuring, "req/s", "");
        add(s, "attempts per request, during", attDuring / reqDuring, "", "without a budget up to 3 (retries.attempts)");
        add(s, "retries, during", SidecarScrape.delta(c[1], c[2], "weft_upstream_retries_total", "upstream",
                "provider"), "", "");
        add(s, "retry budget exhausted, during", SidecarScrape.delta(c[1], c[2],
                "weft_upstream_retry_budget_exhausted_total", "upstream", "provider"), "", "retries refused by the budget");
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
                useTopology(e);
                controls.fault("small", "factor=3");
                controls.fault("medium", "factor=1.5");
                // Fresh JVMs: three warm-ups' worth, so the comparison is not of JIT compilers.
                results.put(plane.name(), e.load(settings.compareConnections(), settings.warmup().multipliedBy(3),
                        settings.phase().multipliedBy(2), new LoadGenerator.PhaseListener() {}));
            } finally {
                experiment = null;
                controls = null;
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

    /** {@link ScenarioTimeline#run} on the topology in use, and the answers the sidecars made meanwhile. */
    private ScenarioTimeline runWithTimeline(int connections, int phases, ScenarioTimeline.Script script)
            throws InterruptedException {
        SidecarScrape consumerBefore = controls.scrape("consumer");
        SidecarScrape providersBefore = controls.scrape("provider");
        ScenarioTimeline timeline = ScenarioTimeline.run(experiment, connections, settings.warmup(), settings.phase(),
                phases, script);
        timeline.meshErrors("consumer sidecar: " + kinds(consumerBefore, controls.scrape("consumer"))
                + "; provider sidecars: " + kinds(providersBefore, controls.scrape("provider")));
        return timeline;
    }

    /** Answers the sidecars made themselves during a scenario, by {@code x-weft-error} kind (counters that rose). */
    private static String kinds(SidecarScrape before, SidecarScrape after) {
        Map<String, Double> byKind = new TreeMap<>();
        Map<Map<String, String>, Double> was = before.series("weft_route_mesh_errors_total");
        after.series("weft_route_mesh_errors_total").forEach((labels, v) -> {
            double d = v - was.getOrDefault(labels, 0.0);
            String kind = labels.get("kind");
            if (d > 0 && kind != null) {
                byKind.merge(kind, d, Double::sum);
            }
        });
        if (byKind.isEmpty()) {
            return "none";
        }
        StringBuilder sb = new StringBuilder();
        byKind.forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append(' ')
                .append(ResilienceReport.format(v)));
        return sb.toString();
    }

    /** What every scenario reports besides its own figures: how its requests failed, and who answered them. */
    private void common(String scenario, ScenarioTimeline t) {
        add(scenario, "failed requests, whole scenario", t.result().errors().total(), "",
                t.result().errors().describe());
        add(scenario, "answers made by sidecars", Double.NaN, "", t.meshErrors());
        summaries.put(scenario, t.render());
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

    private static double seconds(LoadResult r) {
        return r.measured().toNanos() / 1e9;
    }

    private static void sleep(long millis) throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(millis);
    }

    private void add(String scenario, String metric, double value, String unit, String note) {
        figures.add(new ResilienceBench.Figure(scenario, metric, value, unit, note));
    }

    private void say(String line) {
        if (settings.out() != null) {
            settings.out().println("resilience: " + line);
        }
    }
}
