package dev.weft.control.diagnose;

import dev.weft.control.diagnose.Diagnosis.BackPressure;
import dev.weft.control.diagnose.Diagnosis.Culprit;
import dev.weft.control.diagnose.Diagnosis.Overloaded;
import dev.weft.control.diagnose.Diagnosis.Violation;
import dev.weft.control.diagnose.Period.Edge;
import dev.weft.control.diagnose.Period.EdgeStats;
import dev.weft.control.diagnose.Period.ServiceStats;
import dev.weft.control.diagnose.Period.Unit;
import dev.weft.control.diagnose.Period.UnitStats;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Culprit finding over collected traces: which service (or instance) is the root cause right now. Pure: spans in,
 * a {@link Diagnosis} out. docs/observability.md ("Culprit finding") describes the method; in short:
 *
 * <ol>
 *   <li>each trace becomes a {@link CallTree}, giving every span its self time;</li>
 *   <li>spans are aggregated per unit (service, and service × instance: a SERVER span's instance is the endpoint its
 *       parent CLIENT span went to), per edge and per service, in the window and in the baseline before it;</li>
 *   <li>a unit whose p90 self time grew (by {@link Params#growthRatio} and by at least {@link Params#minGrowthMicros})
 *       is a latency culprit; a unit originating more errors than its SLO allows (its own, not a callee's passed
 *       back) is an errors culprit;</li>
 *   <li>a caller whose queue time to a callee grew, or whose sidecar sheds calls, is back-pressure when a culprit lies
 *       downstream of that callee, and over its limit (overloaded) when none does.</li>
 * </ol>
 *
 * <p>Threads: one instance per analysis, on one thread.
 */
public final class Analysis {
    /** Error kinds a sidecar answers when a limit is reached: load shed, a sign of overload rather than a fault. */
    static final Set<String> SHED = Set.of("outbound-limit", "no-capacity", "rate-limited", "inbound-limit",
            "app-at-capacity", "circuit-open");

    /**
     * @param nowMicros       end of the window (epoch µs): spans that ended after it are left out
     * @param windowMicros    the window's length (default 30 s)
     * @param baselineMicros  the baseline's length, just before the window (default 5 min)
     * @param slos            per service, from the policy documents (services without one use the default rule)
     * @param minSamples      requests a unit needs in each range before its self time is compared
     * @param minGrowthMicros the least growth (µs) of a self or queue time that counts: a 0.3 → 0.9 ms change is noise
     * @param growthRatio     how many times its baseline a self or queue time must reach to count as grown
     */
    public record Params(long nowMicros, long windowMicros, long baselineMicros, Map<String, Slo> slos,
                         int minSamples, long minGrowthMicros, double growthRatio) {
        public static Params of(long nowMicros, long windowMicros, long baselineMicros, Map<String, Slo> slos) {
            return new Params(nowMicros, windowMicros, baselineMicros, slos, 5, 5_000, 2.0);
        }
    }

    private final Params p;
    private final Period now = new Period();
    private final Period before = new Period();
    private long spans;

    public Analysis(Params p) {
        this.p = p;
    }

    /** Adds one trace's spans (any order; spans outside the window and baseline are ignored). */
    public void add(List<DiagnoseSpan> trace) {
        CallTree t = new CallTree(trace);
        for (int i = 0; i < t.size(); i++) {
            if (!t.duplicate(i)) {
                add(t, i);
            }
        }
    }

    private void add(CallTree t, int i) {
        DiagnoseSpan s = t.span(i);
        if (s.endMicros() > p.nowMicros()) {
            return; // may still lack children that other sidecars have not exported yet (see DiagnoseApi.SETTLE)
        }
        long windowFrom = p.nowMicros() - p.windowMicros();
        Period per = s.startMicros() >= windowFrom ? now
                : s.startMicros() >= windowFrom - p.baselineMicros() ? before : null;
        if (per == null) {
            return;
        }
        spans++;
        per.traces.add(s.traceId());
        boolean childFailed = false;
        boolean hasChild = !t.children(i).isEmpty();
        for (int c : t.children(i)) {
            childFailed |= t.span(c).failed();
        }
        if (s.client()) {
            String callee = s.remoteService() == null ? "unknown" : s.remoteService();
            EdgeStats e = per.edge(s.service(), callee);
            e.requests++;
            e.queue.add(s.queueMicros());
            if (t.parent(i) < 0) {
                ServiceStats ss = per.service(s.service());
                ss.rootRequests++;
                ss.rootDuration.add(s.durationMicros());
                if (s.failed()) {
                    ss.rootErrors++;
                }
            }
            if (s.failed()) {
                if (SHED.contains(s.error())) {
                    e.shed++;
                    e.shedKinds.merge(s.error(), 1L, Long::sum);
                } else if (!childFailed && s.remoteService() != null) {
                    // Failed between the two sidecars (reset, refused dial, timeout): the callee's doing, counted as a
                    // request of the callee when its sidecar recorded none.
                    for (UnitStats u : unitsOf(per, callee, s.endpoint(), s.endpointId())) {
                        if (!hasChild) {
                            u.requests++;
                        }
                        u.ownError(s.error(), s.traceId());
                    }
                }
            }
            return;
        }
        String endpoint = null;
        String endpointId = null;
        int parent = t.parent(i);
        if (parent >= 0 && t.span(parent).client()) {
            endpoint = t.span(parent).endpoint();
            endpointId = t.span(parent).endpointId();
        }
        long self = t.selfMicros(i);
        for (UnitStats u : unitsOf(per, s.service(), endpoint, endpointId)) {
            u.requests++;
            u.self.add(self);
            u.queue.add(s.queueMicros());
            u.offerSlow(self, s.traceId());
        }
        ServiceStats ss = per.service(s.service());
        ss.serverRequests++;
        ss.serverDuration.add(s.durationMicros());
        if (s.failed()) {
            ss.serverErrors++;
            if (SHED.contains(s.error())) {
                ss.inboundShed++;
                ss.shedKinds.merge(s.error(), 1L, Long::sum);
            } else if (!childFailed) {
                for (UnitStats u : unitsOf(per, s.service(), endpoint, endpointId)) {
                    u.ownError(s.error(), s.traceId());
                }
            }
        }
    }

    /** The service's unit, and its instance's when known. */
    private static List<UnitStats> unitsOf(Period per, String service, String endpoint, String endpointId) {
        UnitStats all = per.unit(service, null);
        if (endpoint == null) {
            return List.of(all);
        }
        UnitStats one = per.unit(service, endpoint);
        one.endpointId = endpointId;
        return List.of(all, one);
    }

    /** Ranks what was added. */
    public Diagnosis finish() {
        List<Culprit> culprits = new ArrayList<>();
        for (String service : new TreeSet<>(serviceNames())) {
            culprits.addAll(candidates(service, true));
            culprits.addAll(candidates(service, false));
        }
        culprits = dominant(culprits);
        culprits.sort(Comparator.comparingDouble(Culprit::score).reversed().thenComparing(Culprit::service));
        Set<String> culpritServices = new HashSet<>();
        culprits.forEach(c -> culpritServices.add(c.service()));

        Map<String, Set<String>> callees = new HashMap<>();
        now.edges.keySet().forEach(e -> callees.computeIfAbsent(e.caller(), k -> new TreeSet<>()).add(e.callee()));
        List<BackPressure> backPressure = new ArrayList<>();
        List<Overloaded> overloaded = new ArrayList<>();
        edgeSymptoms(callees, culpritServices, backPressure, overloaded);
        inboundSymptoms(callees, culpritServices, backPressure, overloaded);
        // Where the load comes in first: a burst at the entry is the news, queueing further in its consequence.
        overloaded.sort(Comparator.comparing((Overloaded o) -> {
            ServiceStats ss = now.services.get(o.service());
            return ss == null || ss.rootRequests == 0;
        }));
        List<String> waiting = waitingOn(culpritServices);
        List<Violation> violations = violations();
        boolean healthy = culprits.isEmpty() && overloaded.isEmpty() && violations.isEmpty();
        long windowFrom = p.nowMicros() - p.windowMicros();
        Diagnosis.Window window = new Diagnosis.Window(windowFrom / 1000, p.nowMicros() / 1000,
                (windowFrom - p.baselineMicros()) / 1000, now.traces.size(), before.traces.size(), spans);
        String verdict = Verdicts.verdict(culprits, backPressure, waiting, overloaded, violations, window,
                p.windowMicros());
        return new Diagnosis(verdict, healthy, culprits, backPressure, waiting, overloaded, violations, window);
    }

    /**
     * The candidates that matter: of each kind, those with at least {@value #DOMINANCE} of the largest impact (self-time
     * growth in µs; own errors). When one service's own time grew by 180 ms, another's 10 ms (a busy machine's noise,
     * or a GC pause) explains nothing of what callers see; two comparable causes are both kept.
     */
    private static List<Culprit> dominant(List<Culprit> all) {
        double maxGrowth = 0;
        double maxErrors = 0;
        for (Culprit c : all) {
            if (c.kind().equals("latency")) {
                maxGrowth = Math.max(maxGrowth, c.selfTimeNowMs() - c.selfTimeBeforeMs());
            } else {
                maxErrors = Math.max(maxErrors, ownErrors(c));
            }
        }
        List<Culprit> kept = new ArrayList<>();
        for (Culprit c : all) {
            double impact = c.kind().equals("latency") ? c.selfTimeNowMs() - c.selfTimeBeforeMs() : ownErrors(c);
            if (impact >= DOMINANCE * (c.kind().equals("latency") ? maxGrowth : maxErrors)) {
                kept.add(c);
            }
        }
        return kept;
    }

    /** A fourth: generous enough to keep two real causes, strict enough to drop noise beside a clear one. */
    static final double DOMINANCE = 0.25;

    private static double ownErrors(Culprit c) {
        return c.errorKinds().values().stream().mapToLong(Long::longValue).sum();
    }

    private Set<String> serviceNames() {
        Set<String> names = new HashSet<>();
        now.units.keySet().forEach(u -> names.add(u.service()));
        return names;
    }

    /**
     * The service's culprits of one kind: the instances that are, when only some of its instances are (one bad
     * instance is the answer, not its service); else the service as a whole (endpoint null), as when it has only one.
     */
    private List<Culprit> candidates(String service, boolean latency) {
        List<Culprit> instances = new ArrayList<>();
        int instancesWithData = 0;
        for (Map.Entry<Unit, UnitStats> e : now.units.entrySet()) {
            Unit u = e.getKey();
            if (u.service().equals(service) && u.endpoint() != null && e.getValue().requests >= p.minSamples()) {
                instancesWithData++;
                Culprit c = culprit(u, e.getValue(), latency);
                if (c != null) {
                    instances.add(c);
                }
            }
        }
        if (!instances.isEmpty() && instances.size() < instancesWithData) {
            return instances;
        }
        Unit whole = new Unit(service, null);
        UnitStats all = now.units.get(whole);
        Culprit c = all == null ? null : culprit(whole, all, latency);
        return c != null ? List.of(c) : instances;
    }

    private Culprit culprit(Unit unit, UnitStats n, boolean latency) {
        if (n.requests < p.minSamples()) {
            return null;
        }
        UnitStats b = before.units.get(unit);
        double selfBefore = b == null || b.self.size() < p.minSamples() ? Double.NaN : b.self.quantile(0.9);
        long selfNow = n.self.quantile(0.9);
        double errorRate = (double) n.ownErrors / n.requests;
        double score;
        List<String> traces;
        if (latency) {
            if (Double.isNaN(selfBefore) || n.self.size() < p.minSamples()
                    || selfNow < p.growthRatio() * Math.max(selfBefore, 100)
                    || selfNow - selfBefore < p.minGrowthMicros()) {
                return null;
            }
            score = selfNow / Math.max(selfBefore, 100);
            traces = n.slowestTraces();
        } else {
            double threshold = errorThreshold(unit.service());
            if (n.ownErrors < 2 || errorRate <= threshold) {
                return null;
            }
            score = errorRate / threshold;
            traces = List.copyOf(n.errorTraces);
        }
        return new Culprit(unit.service(), unit.endpoint(), unit.endpoint() == null ? null : n.endpointId,
                latency ? "latency" : "errors", round(score), ms(selfBefore), ms(selfNow), ms(n.queue.quantile(0.9)),
                round(errorRate * 100) / 100, n.requests, new LinkedHashMap<>(n.errorKinds), traces);
    }

    /** The service's SLO, else the one for every service ({@code *}), else null. */
    private Slo slo(String service) {
        Slo own = p.slos().get(service);
        return own != null ? own : p.slos().get("*");
    }

    private double errorThreshold(String service) {
        Slo slo = slo(service);
        return slo != null && slo.errorRate() != null ? slo.errorRate() : Slo.DEFAULT_ERROR_RATE;
    }

    /** Callers whose queue time to a callee grew or whose sidecar sheds calls to it. */
    private void edgeSymptoms(Map<String, Set<String>> callees, Set<String> culprits, List<BackPressure> backPressure,
                              List<Overloaded> overloaded) {
        for (Map.Entry<Edge, EdgeStats> e : now.edges.entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<Edge, EdgeStats> x) -> x.getKey().caller())
                        .thenComparing(x -> x.getKey().callee())).toList()) {
            Edge edge = e.getKey();
            EdgeStats n = e.getValue();
            if (n.requests < p.minSamples()) {
                continue;
            }
            EdgeStats b = before.edges.get(edge);
            long qNow = n.queue.quantile(0.9);
            long qBefore = b == null ? 0 : b.queue.quantile(0.9);
            double shedRate = (double) n.shed / n.requests;
            boolean queueGrew = qNow >= p.growthRatio() * Math.max(qBefore, 100) && qNow - qBefore >= p.minGrowthMicros();
            // No comparison with the baseline: shedding now is the news, even when a long burst began before the window.
            boolean shedding = n.shed >= 2 && shedRate > Slo.DEFAULT_ERROR_RATE;
            if (!queueGrew && !shedding) {
                continue;
            }
            if (culprits.contains(edge.callee()) || reaches(callees, edge.callee(), culprits)) {
                backPressure.add(new BackPressure(edge.caller(), edge.callee(), ms(qBefore), ms(qNow), n.shed));
            } else if (!culprits.contains(edge.caller())) {
                overloaded.add(new Overloaded(edge.caller(), Verdicts.edgeReason(edge, n, qBefore, qNow)));
            }
        }
    }

    /** Services whose own sidecar queued or shed inbound requests (their capacity or inbound limit reached). */
    private void inboundSymptoms(Map<String, Set<String>> callees, Set<String> culprits,
                                 List<BackPressure> backPressure, List<Overloaded> overloaded) {
        for (Map.Entry<String, ServiceStats> e : now.services.entrySet()) {
            String service = e.getKey();
            ServiceStats n = e.getValue();
            UnitStats unit = now.units.get(new Unit(service, null));
            if (culprits.contains(service) || unit == null || n.serverRequests < p.minSamples()) {
                continue;
            }
            UnitStats b = before.units.get(new Unit(service, null));
            long qNow = unit.queue.quantile(0.9);
            long qBefore = b == null ? 0 : b.queue.quantile(0.9);
            boolean queueGrew = qNow >= p.growthRatio() * Math.max(qBefore, 100) && qNow - qBefore >= p.minGrowthMicros();
            double shedRate = (double) n.inboundShed / n.serverRequests;
            boolean shedding = n.inboundShed >= 2 && shedRate > Slo.DEFAULT_ERROR_RATE;
            if (!queueGrew && !shedding) {
                continue;
            }
            if (reaches(callees, service, culprits)) {
                String next = callees.getOrDefault(service, Set.of()).stream()
                        .filter(c -> culprits.contains(c) || reaches(callees, c, culprits)).findFirst().orElse("?");
                backPressure.add(new BackPressure(service, next, ms(qBefore), ms(qNow), n.inboundShed));
            } else {
                overloaded.add(new Overloaded(service, Verdicts.inboundReason(service, n, qBefore, qNow)));
            }
        }
    }

    /** Whether a culprit is {@code from} or lies downstream of it (edges seen in the window). */
    private static boolean reaches(Map<String, Set<String>> callees, String from, Set<String> targets) {
        ArrayDeque<String> todo = new ArrayDeque<>(List.of(from));
        Set<String> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            String s = todo.poll();
            if (!seen.add(s)) {
                continue;
            }
            if (targets.contains(s)) {
                return true;
            }
            todo.addAll(callees.getOrDefault(s, Set.of()));
        }
        return false;
    }

    /** The callers, direct or not, of the culprit services, nearest first; culprits themselves excluded. */
    private List<String> waitingOn(Set<String> culprits) {
        Map<String, Set<String>> callers = new HashMap<>();
        now.edges.keySet().forEach(e -> callers.computeIfAbsent(e.callee(), k -> new TreeSet<>()).add(e.caller()));
        List<String> out = new ArrayList<>();
        ArrayDeque<String> todo = new ArrayDeque<>(new TreeSet<>(culprits));
        Set<String> seen = new HashSet<>(culprits);
        while (!todo.isEmpty()) {
            for (String caller : callers.getOrDefault(todo.poll(), Set.of())) {
                if (seen.add(caller)) {
                    out.add(caller);
                    todo.add(caller);
                }
            }
        }
        return out;
    }

    /** Services over their SLO, or without one over twice their baseline p99 or over 1% errors. */
    private List<Violation> violations() {
        List<Violation> out = new ArrayList<>();
        for (Map.Entry<String, ServiceStats> e : now.services.entrySet()) {
            String service = e.getKey();
            ServiceStats n = e.getValue();
            if (n.requests() < p.minSamples()) {
                continue;
            }
            Slo slo = slo(service);
            long p99 = n.duration().quantile(0.99);
            if (slo != null && slo.p99() != null) {
                long limit = slo.p99().toNanos() / 1000;
                if (p99 > limit) {
                    out.add(new Violation(service, "p99", ms(p99), ms(limit), true));
                }
            } else {
                ServiceStats b = before.services.get(service);
                if (b != null && b.requests() >= p.minSamples()) {
                    long limit = 2 * b.duration().quantile(0.99);
                    if (p99 > limit && p99 - limit / 2 >= p.minGrowthMicros()) {
                        out.add(new Violation(service, "p99", ms(p99), ms(limit), false));
                    }
                }
            }
            double rate = (double) n.errors() / n.requests();
            double threshold = errorThreshold(service);
            if (rate > threshold) {
                out.add(new Violation(service, "error-rate", round(rate * 10_000) / 10_000, threshold,
                        slo != null && slo.errorRate() != null));
            }
        }
        return out;
    }

    static double ms(double micros) {
        return Double.isNaN(micros) ? 0 : Math.round(micros / 10.0) / 100.0;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
