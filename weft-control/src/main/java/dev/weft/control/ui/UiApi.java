package dev.weft.control.ui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlBackend;
import dev.weft.control.cli.MeshStats;
import dev.weft.control.history.History;
import dev.weft.control.history.HistoryScraper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * The JSON the dashboard polls, under {@code /v1/ui/}: {@code map}, {@code service}, {@code series},
 * {@code sidecars}, {@code sidecar-config} and {@code policies}. Every answer is bounded (a limit on nodes and
 * rows, at most one series of at most the ring's length), and every parameter is checked against an allow-list
 * first ({@link UiParams}): a bad one gets a 400 that says what was expected, counted in {@link #rejected()}.
 *
 * <p>Threads: {@link #handle} runs on an event loop and only reads the history and its last tick; the answers that
 * wait (policies from the store, a sidecar's /config) complete on other threads.
 */
public final class UiApi {
    /** Nodes on the map unless the page asks for another limit; at most {@link #MAX_NODES}. */
    static final int DEFAULT_NODES = 60;
    static final int MAX_NODES = 500;
    static final int MAX_ROWS = 1000;
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String ROUTES = "GET /v1/ui/map?filter=&limit=, /v1/ui/service?name=,"
            + " /v1/ui/series?service=[&instance=] or ?from=&to=, /v1/ui/sidecars?filter=&offset=&limit=,"
            + " /v1/ui/sidecar-config?instance=, /v1/ui/policies";

    /** A response: status, type, body, and a Location for a redirect (else null). */
    public record Answer(int status, String contentType, byte[] body, String location) {
        static Answer json(int status, Object value) {
            try {
                return new Answer(status, "application/json", JSON.writeValueAsBytes(value), null);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        static Answer error(int status, String code, String message) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("error", message);
            m.put("code", code);
            return json(status, m);
        }
    }

    private final HistoryScraper scraper;
    private final ControlBackend store;
    private final LongAdder rejected = new LongAdder();

    public UiApi(HistoryScraper scraper, ControlBackend store) {
        this.scraper = scraper;
        this.store = store;
    }

    /** Requests refused for a bad parameter or an unknown route. */
    public long rejected() {
        return rejected.sum();
    }

    /** The dashboard's lines of the control plane's /metrics: refusals, and how the history is doing. */
    public String metricsText() {
        History h = scraper.history();
        HistoryScraper.Latest l = scraper.latest();
        long unread = l.sidecars().stream().filter(s -> s.error() != null && !s.admin().isEmpty()).count();
        return "# HELP weft_control_ui_rejected_total Dashboard API requests refused: a bad parameter or no such"
                + " route.\n"
                + "# TYPE weft_control_ui_rejected_total counter\n"
                + "weft_control_ui_rejected_total " + rejected.sum() + "\n"
                + "# HELP weft_control_history_series Series in the dashboard's history (services, edges, endpoints).\n"
                + "# TYPE weft_control_history_series gauge\n"
                + "weft_control_history_series " + h.seriesCount() + "\n"
                + "# HELP weft_control_history_dropped_series_total New series not kept: the history was full.\n"
                + "# TYPE weft_control_history_dropped_series_total counter\n"
                + "weft_control_history_dropped_series_total " + h.droppedSeries() + "\n"
                + "# HELP weft_control_history_unread_sidecars Registered sidecars whose /metrics the last history"
                + " scrape could not read.\n"
                + "# TYPE weft_control_history_unread_sidecars gauge\n"
                + "weft_control_history_unread_sidecars " + unread + "\n";
    }

    CompletableFuture<Answer> handle(String route, Map<String, List<String>> params) {
        try {
            return switch (route) {
                case "map" -> done(map(UiParams.text(params, "filter"),
                        UiParams.limit(params, "limit", DEFAULT_NODES, MAX_NODES)));
                case "service" -> done(service(UiParams.service(params, "name")));
                case "series" -> done(series(params));
                case "sidecars" -> done(sidecars(UiParams.text(params, "filter"),
                        UiParams.limit(params, "offset", 0, Integer.MAX_VALUE),
                        UiParams.limit(params, "limit", 200, MAX_ROWS)));
                case "sidecar-config" -> sidecarConfig(UiParams.instance(params, "instance"));
                case "policies" -> store.policies().thenApply(this::policies);
                default -> {
                    rejected.increment();
                    yield done(Answer.error(404, "not-found", "no route /v1/ui/" + route + " (routes: " + ROUTES
                            + ")"));
                }
            };
        } catch (UiParams.BadRequest e) {
            rejected.increment();
            return done(Answer.error(400, "bad-request", e.getMessage()));
        }
    }

    private static CompletableFuture<Answer> done(Answer a) {
        return CompletableFuture.completedFuture(a);
    }

    private static CompletableFuture<Answer> done(Map<String, Object> body) {
        return done(Answer.json(200, body));
    }

    // --- the map ---

    /**
     * Services as nodes and edges between them, from the last tick. With more services than {@code limit}, the
     * busiest of those matching the filter are kept, and the answer says how many were left out.
     */
    private Map<String, Object> map(String filter, int limit) {
        HistoryScraper.Latest l = scraper.latest();
        Map<String, MeshStats.Row> rows = new TreeMap<>();
        l.services().forEach(r -> rows.put(r.name(), r));
        Set<String> names = new LinkedHashSet<>(rows.keySet());
        l.sidecars().forEach(s -> names.add(s.service()));
        for (MeshStats.Row e : l.edges()) {
            String[] ends = ends(e.name());
            names.add(ends[0]);
            names.add(ends[1]);
        }
        // Busiest by what a service served plus what it sent, so an entry service (it serves nothing through the mesh,
        // its clients are outside) ranks by its calls rather than last.
        Map<String, Double> traffic = new HashMap<>();
        rows.forEach((n, r) -> traffic.merge(n, rate(r), Double::sum));
        for (MeshStats.Row e : l.edges()) {
            traffic.merge(ends(e.name())[0], rate(e), Double::sum);
        }
        String f = filter.toLowerCase(Locale.ROOT);
        List<String> matching = new ArrayList<>(names.stream()
                .filter(n -> n.toLowerCase(Locale.ROOT).contains(f)).toList());
        matching.sort(Comparator.comparingDouble((String n) -> traffic.getOrDefault(n, 0.0)).reversed()
                .thenComparing(Comparator.naturalOrder()));
        List<String> kept = matching.subList(0, Math.min(limit, matching.size()));
        Set<String> keptSet = new LinkedHashSet<>(kept);
        Map<String, Integer> instances = new TreeMap<>();
        l.sidecars().forEach(s -> instances.merge(s.service(), 1, Integer::sum));
        List<Map<String, Object>> nodes = new ArrayList<>();
        for (String n : kept) {
            Map<String, Object> m = row(rows.get(n));
            m.put("name", n);
            m.put("instances", instances.getOrDefault(n, 0));
            nodes.add(m);
        }
        List<Map<String, Object>> edges = new ArrayList<>();
        for (MeshStats.Row e : l.edges()) {
            String[] ends = ends(e.name());
            if (keptSet.contains(ends[0]) && keptSet.contains(ends[1])) {
                Map<String, Object> m = row(e);
                m.put("from", ends[0]);
                m.put("to", ends[1]);
                edges.add(m);
            }
        }
        Map<String, Object> body = head(l);
        body.put("services", nodes);
        body.put("edges", edges);
        body.put("totalServices", names.size());
        body.put("matchingServices", matching.size());
        body.put("hiddenServices", matching.size() - kept.size());
        return body;
    }

    private static double rate(MeshStats.Row r) {
        return r == null || Double.isNaN(r.rps()) ? 0 : r.rps();
    }

    /** {@code "caller → callee"} (MeshStats' edge name) split in two. */
    private static String[] ends(String edge) {
        int arrow = edge.indexOf(" → ");
        return arrow < 0 ? new String[]{edge, "unknown"} : new String[]{edge.substring(0, arrow),
                edge.substring(arrow + 3)};
    }

    private Map<String, Object> service(String name) {
        HistoryScraper.Latest l = scraper.latest();
        Map<String, Object> body = head(l);
        body.put("name", name);
        body.put("now", l.services().stream().filter(r -> r.name().equals(name)).findFirst().map(UiApi::row)
                .orElse(null));
        List<Map<String, Object>> endpoints = new ArrayList<>();
        for (MeshStats.Row r : l.endpointsByService().getOrDefault(name, List.of())) {
            Map<String, Object> m = row(r);
            m.put("instance", r.name());
            endpoints.add(m);
        }
        body.put("endpoints", endpoints.subList(0, Math.min(MAX_ROWS, endpoints.size())));
        List<Map<String, Object>> in = new ArrayList<>();
        List<Map<String, Object>> out = new ArrayList<>();
        for (MeshStats.Row e : l.edges()) {
            String[] ends = ends(e.name());
            Map<String, Object> m = row(e);
            m.put("from", ends[0]);
            m.put("to", ends[1]);
            if (ends[1].equals(name)) {
                in.add(m);
            } else if (ends[0].equals(name)) {
                out.add(m);
            }
        }
        body.put("callers", in.subList(0, Math.min(MAX_ROWS, in.size())));
        body.put("callees", out.subList(0, Math.min(MAX_ROWS, out.size())));
        return body;
    }

    // --- series ---

    private Map<String, Object> series(Map<String, List<String>> params) {
        int minutes = UiParams.limit(params, "minutes", 60, 24 * 60);
        long since = System.currentTimeMillis() - minutes * 60_000L;
        History.Kind kind;
        String name;
        if (params.containsKey("from") || params.containsKey("to")) {
            kind = History.Kind.EDGE;
            name = UiParams.service(params, "from") + " → " + UiParams.service(params, "to");
        } else if (params.containsKey("instance")) {
            kind = History.Kind.ENDPOINT;
            name = UiParams.service(params, "service") + "/" + UiParams.instance(params, "instance");
        } else {
            kind = History.Kind.SERVICE;
            name = UiParams.service(params, "service");
        }
        History.Points p = scraper.history().read(kind, name, since);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("kind", kind.name().toLowerCase(Locale.ROOT));
        body.put("name", name);
        body.put("intervalSeconds", scraper.interval().toMillis() / 1000.0);
        if (p == null) {
            body.put("times", List.of());
            body.put("note", "no history for " + name + " yet (it appears once traffic is seen in two scrapes)");
            return body;
        }
        body.put("times", p.times());
        for (int m = 0; m < History.METRICS; m++) {
            List<Object> values = new ArrayList<>(p.times().length);
            for (float v : p.values()[m]) {
                values.add(num(v));
            }
            body.put(History.METRIC_NAMES.get(m), values);
        }
        return body;
    }

    // --- sidecars and policies ---

    private Map<String, Object> sidecars(String filter, int offset, int limit) {
        HistoryScraper.Latest l = scraper.latest();
        String f = filter.toLowerCase(Locale.ROOT);
        List<HistoryScraper.Sidecar> matching = l.sidecars().stream()
                .filter(s -> (s.service() + " " + s.instance()).toLowerCase(Locale.ROOT).contains(f))
                .sorted(Comparator.comparing(HistoryScraper.Sidecar::service)
                        .thenComparing(HistoryScraper.Sidecar::instance))
                .toList();
        List<Map<String, Object>> rows = new ArrayList<>();
        int from = Math.min(offset, matching.size());
        int to = (int) Math.min(matching.size(), (long) offset + limit);
        for (HistoryScraper.Sidecar s : matching.subList(from, to)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("service", s.service());
            m.put("instance", s.instance());
            m.put("address", s.address());
            m.put("admin", s.admin());
            m.put("ready", s.ready());
            m.put("uptimeSeconds", num(s.uptimeSeconds()));
            m.put("version", s.version());
            m.put("error", s.error());
            rows.add(m);
        }
        Map<String, Object> body = head(l);
        body.put("total", l.sidecars().size());
        body.put("matching", matching.size());
        body.put("offset", offset);
        body.put("sidecars", rows);
        return body;
    }

    private CompletableFuture<Answer> sidecarConfig(String instance) {
        String admin = scraper.adminOf(instance);
        if (admin == null) {
            return done(Answer.error(404, "unknown-sidecar", "no registered sidecar '" + instance
                    + "' with an admin address (see /v1/ui/sidecars)"));
        }
        return scraper.readConfig(admin).thenApply(text -> new Answer(200, "application/json",
                text.getBytes(StandardCharsets.UTF_8), null));
    }

    private Answer policies(ControlBackend.Policies p) {
        HistoryScraper.Latest l = scraper.latest();
        List<Map<String, Object>> documents = new ArrayList<>();
        new TreeMap<>(p.policies()).forEach((name, text) -> {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("name", name);
            d.put("services", PolicyServices.named(text));
            d.put("text", text);
            documents.add(d);
        });
        List<Map<String, Object>> sidecars = new ArrayList<>();
        for (HistoryScraper.Sidecar s : l.sidecars()) {
            if (sidecars.size() >= MAX_ROWS) {
                break;
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("service", s.service());
            m.put("instance", s.instance());
            var status = l.policyStatus().get(s.instance());
            m.put("status", status == null ? null : status.path("status").asText(null));
            m.put("documents", status == null ? null : status.path("documents"));
            m.put("rejections", status == null ? null : status.path("rejections").asLong());
            sidecars.add(m);
        }
        Map<String, Object> body = head(l);
        body.put("revision", p.revision());
        body.put("documents", documents);
        body.put("sidecars", sidecars);
        body.put("note", "The control plane stores documents as text; each sidecar parses them and reports in its"
                + " /config whether it applied them or why it rejected them (read every "
                + scraper.interval().multipliedBy(6).toSeconds() + " s)");
        return Answer.json(200, body);
    }

    // --- helpers ---

    private static Map<String, Object> head(HistoryScraper.Latest l) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("at", l.epochMillis());
        m.put("windowSeconds", num(l.windowSeconds()));
        m.put("notes", l.notes().subList(0, Math.min(20, l.notes().size())));
        return m;
    }

    private static Map<String, Object> row(MeshStats.Row r) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (r == null) {
            return m;
        }
        double[] v = HistoryScraper.values(r);
        for (int i = 0; i < History.METRICS; i++) {
            m.put(History.METRIC_NAMES.get(i), num(v[i]));
        }
        return m;
    }

    /** JSON has no NaN: no data is null. */
    private static Double num(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : v;
    }
}
