package dev.weft.control.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The numbers behind {@code ./weft stat} and {@code ./weft top}: per service and per edge (caller → callee), the
 * request rate, success rate, p50/p99 latency and requests in flight, computed either from two scrapes of every
 * sidecar's /metrics (rates and percentiles over the interval between them) or from collected spans.
 *
 * <p>From metrics, a service's row is what its sidecars' inbound sides served; an edge's row is what the caller's
 * sidecar sent to the callee (its outbound side). Percentiles are interpolated within histogram buckets, as
 * Prometheus' {@code histogram_quantile} does.
 */
public final class MeshStats {
    private MeshStats() {}

    /** One sidecar's /metrics at one moment. */
    public record Scrape(String service, String instance, List<PromText.Sample> samples) {}

    /**
     * One table row. NaN means "no data" (no requests in the window); {@code inFlight} is -1 when unknown.
     *
     * @param cpuMicrosPerRequest the mesh tax: sidecar CPU per request handled (NaN when unknown)
     */
    public record Row(String name, int instances, double rps, double success, double p50Millis, double p90Millis,
                      double p99Millis, double inFlight, double cpuMicrosPerRequest, double heapBytesPerRequest) {}

    public record Report(String source, double windowSeconds, List<Row> services, List<Row> edges, List<String> notes) {}

    private static final class Acc {
        final Set<String> instances = new LinkedHashSet<>();
        double requests;
        double failures;
        final TreeMap<Double, Double> buckets = new TreeMap<>();
        final List<Double> durationsMillis = new ArrayList<>();
        double inFlight;
        boolean inFlightKnown;
        double cpuSeconds;
        double heapBytes;
        double hops;
    }

    public static Report fromScrapes(List<Scrape> before, List<Scrape> after, double seconds, List<String> notes) {
        Map<String, Map<String, Double>> previous = new HashMap<>();
        for (Scrape s : before) {
            Map<String, Double> m = new HashMap<>();
            for (PromText.Sample x : s.samples()) {
                m.put(key(x), x.value());
            }
            previous.put(s.instance(), m);
        }
        TreeMap<String, Acc> services = new TreeMap<>();
        TreeMap<String, Acc> edges = new TreeMap<>();
        for (Scrape s : after) {
            Map<String, Double> prev = previous.getOrDefault(s.instance(), Map.of());
            Acc svc = services.computeIfAbsent(s.service(), k -> new Acc());
            svc.instances.add(s.instance());
            for (PromText.Sample x : s.samples()) {
                double delta = delta(prev, x);
                String dir = x.label("direction");
                switch (x.name()) {
                    case "weft_route_requests_total" -> {
                        Acc a = dir.equals("inbound") ? svc : edge(edges, s, x.label("dst_service"));
                        a.requests += delta;
                        if (x.label("status_class").equals("5xx")) {
                            a.failures += delta;
                        }
                    }
                    case "weft_route_request_duration_seconds_bucket" -> {
                        Acc a = dir.equals("inbound") ? svc : edge(edges, s, x.label("dst_service"));
                        double le = x.label("le").equals("+Inf") ? Double.POSITIVE_INFINITY
                                : Double.parseDouble(x.label("le"));
                        a.buckets.merge(le, delta, Double::sum);
                    }
                    case "weft_requests_in_flight" -> {
                        if (dir.equals("inbound")) {
                            svc.inFlight += x.value();
                            svc.inFlightKnown = true;
                        }
                    }
                    case "weft_endpoint_in_flight", "weft_upstream_queue_depth" -> {
                        Acc a = edge(edges, s, x.label("upstream"));
                        a.inFlight += x.value();
                        a.inFlightKnown = true;
                    }
                    case "weft_mesh_cpu_seconds_total" -> {
                        if (x.label("scope").equals("process")) {
                            svc.cpuSeconds += delta;
                        }
                    }
                    case "weft_mesh_heap_allocated_bytes_total" -> {
                        if (x.label("scope").equals("process")) {
                            svc.heapBytes += delta;
                        }
                    }
                    case "weft_mesh_hops_total" -> svc.hops += delta;
                    default -> {
                        // not shown
                    }
                }
            }
        }
        return new Report("metrics", seconds, rows(services, seconds, true), rows(edges, seconds, false), notes);
    }

    private static Acc edge(TreeMap<String, Acc> edges, Scrape s, String dst) {
        Acc a = edges.computeIfAbsent(s.service() + " → " + (dst.isEmpty() ? "unknown" : dst), k -> new Acc());
        a.instances.add(s.instance());
        return a;
    }

    /** Counters restart from zero when a sidecar does: a value below the previous one is all new. */
    private static double delta(Map<String, Double> prev, PromText.Sample x) {
        Double p = prev.get(key(x));
        if (p == null || x.value() < p) {
            return x.value();
        }
        return x.value() - p;
    }

    private static String key(PromText.Sample x) {
        return x.name() + new TreeMap<>(x.labels());
    }

    private static List<Row> rows(TreeMap<String, Acc> accs, double seconds, boolean withTax) {
        List<Row> rows = new ArrayList<>();
        accs.forEach((name, a) -> {
            double p50;
            double p90;
            double p99;
            if (!a.durationsMillis.isEmpty()) {
                List<Double> d = new ArrayList<>(a.durationsMillis);
                d.sort(Double::compare);
                p50 = exact(d, 0.5);
                p90 = exact(d, 0.9);
                p99 = exact(d, 0.99);
            } else {
                p50 = quantile(a.buckets, 0.5) * 1000;
                p90 = quantile(a.buckets, 0.9) * 1000;
                p99 = quantile(a.buckets, 0.99) * 1000;
            }
            rows.add(new Row(name, a.instances.size(), seconds > 0 ? a.requests / seconds : Double.NaN,
                    a.requests > 0 ? 1 - a.failures / a.requests : Double.NaN, p50, p90, p99,
                    a.inFlightKnown ? a.inFlight : -1,
                    withTax && a.hops > 0 ? a.cpuSeconds * 1e6 / a.hops : Double.NaN,
                    withTax && a.hops > 0 ? a.heapBytes / a.hops : Double.NaN));
        });
        return rows;
    }

    /**
     * Prometheus' histogram_quantile: linear interpolation inside the bucket holding the rank; the highest finite
     * bound when the rank falls in +Inf. NaN without observations.
     */
    static double quantile(TreeMap<Double, Double> cumulative, double q) {
        if (cumulative.isEmpty()) {
            return Double.NaN;
        }
        double total = cumulative.lastEntry().getValue();
        if (total <= 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            if (e.getValue() >= rank) {
                if (e.getKey().isInfinite()) {
                    return lowerBound;
                }
                double inBucket = e.getValue() - lowerCount;
                return inBucket <= 0 ? e.getKey() : lowerBound + (e.getKey() - lowerBound) * (rank - lowerCount) / inBucket;
            }
            lowerBound = e.getKey();
            lowerCount = e.getValue();
        }
        return lowerBound;
    }

    private static double exact(List<Double> sorted, double q) {
        int i = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    /**
     * From collected spans: a service's row from its SERVER spans (what it served through its sidecar), an edge's
     * from the caller's CLIENT spans that name the callee. In-flight is not known from finished spans. A span exported
     * for its error alone is left out: every failure may be exported so, but only a sample of the successes.
     */
    static Report fromTraces(List<List<TraceSpan>> traces, double windowSeconds, List<String> notes) {
        TreeMap<String, Acc> services = new TreeMap<>();
        TreeMap<String, Acc> edges = new TreeMap<>();
        for (List<TraceSpan> trace : traces) {
            for (TraceSpan s : trace) {
                if (s.localService() == null || s.errorOnly()) {
                    continue;
                }
                Acc a;
                if ("SERVER".equals(s.kind())) {
                    a = services.computeIfAbsent(s.localService(), k -> new Acc());
                } else if ("CLIENT".equals(s.kind())) {
                    a = edges.computeIfAbsent(s.localService() + " → "
                            + (s.remoteService() == null ? "unknown" : s.remoteService()), k -> new Acc());
                    services.computeIfAbsent(s.localService(), k -> new Acc());
                } else {
                    continue;
                }
                a.requests++;
                if (s.failed()) {
                    a.failures++;
                }
                a.durationsMillis.add(s.duration() / 1000.0);
            }
        }
        return new Report("spans", windowSeconds, rows(services, windowSeconds, false), rows(edges, windowSeconds, false),
                notes);
    }

    static String render(Report r) {
        StringBuilder sb = new StringBuilder();
        Table services = new Table("SERVICE", "INSTANCES", "RPS", "SUCCESS", "P50", "P99", "IN-FLIGHT", "MESH CPU/REQ",
                "MESH HEAP/REQ");
        for (Row row : r.services()) {
            services.add(row.name(), row.instances() == 0 ? "-" : String.valueOf(row.instances()), rate(row.rps()), percent(row.success()),
                    millis(row.p50Millis()), millis(row.p99Millis()), count(row.inFlight()),
                    Double.isNaN(row.cpuMicrosPerRequest()) ? "-" : String.format(Locale.ROOT, "%.0f µs", row.cpuMicrosPerRequest()),
                    Double.isNaN(row.heapBytesPerRequest()) ? "-" : bytes(row.heapBytesPerRequest()));
        }
        Table edges = new Table("EDGE (caller → callee)", "RPS", "SUCCESS", "P50", "P99", "IN-FLIGHT");
        for (Row row : r.edges()) {
            edges.add(row.name(), rate(row.rps()), percent(row.success()), millis(row.p50Millis()),
                    millis(row.p99Millis()), count(row.inFlight()));
        }
        sb.append(services.render());
        sb.append('\n');
        sb.append(r.edges().isEmpty() ? "(no calls between services in this window)\n" : edges.render());
        sb.append(String.format(Locale.ROOT, "%nfrom %s over %.1f s", r.source().equals("metrics")
                ? "sidecar /metrics" : "collected spans", r.windowSeconds()));
        sb.append(r.source().equals("metrics") ? "; services: what their sidecars served inbound; edges: what the"
                + " caller's sidecar sent\n" : "; services: SERVER spans; edges: CLIENT spans\n");
        for (String n : r.notes()) {
            sb.append("note: ").append(n).append('\n');
        }
        return sb.toString();
    }

    private static String rate(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String percent(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f%%", v * 100);
    }

    static String millis(double ms) {
        if (Double.isNaN(ms)) {
            return "-";
        }
        if (ms < 1) {
            return String.format(Locale.ROOT, "%.0f µs", ms * 1000);
        }
        if (ms < 1000) {
            return String.format(Locale.ROOT, "%.2f ms", ms);
        }
        return String.format(Locale.ROOT, "%.2f s", ms / 1000);
    }

    private static String count(double v) {
        return v < 0 ? "-" : String.format(Locale.ROOT, "%.0f", v);
    }

    private static String bytes(double v) {
        return v < 10_000 ? String.format(Locale.ROOT, "%.0f B", v) : String.format(Locale.ROOT, "%.1f KB", v / 1024);
    }
}
