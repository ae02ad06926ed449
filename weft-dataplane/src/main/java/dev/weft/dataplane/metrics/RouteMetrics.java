package dev.weft.dataplane.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The golden metrics of one sidecar: per direction, destination service, route and status class, the requests,
 * their latency, body bytes, retries and the sidecar's own errors.
 *
 * <p>Cardinality is bounded: destinations by {@link #MAX_DESTINATIONS} (the router's own cap on distinct services
 * is lower), routes by the route table plus {@link #MAX_ROUTES_PER_DESTINATION}, error kinds by {@link #MAX_KINDS};
 * anything beyond lands in {@value #OTHER}. Paths are never labels.
 *
 * <p>Threads: {@link #record} runs on every Worker; lookups are lock free (ConcurrentHashMap reads) and counters are
 * LongAdders. Rendering runs on the admin request's Worker and only reads.
 */
public final class RouteMetrics {
    public static final String OTHER = "other";
    public static final int MAX_DESTINATIONS = 512;
    public static final int MAX_ROUTES_PER_DESTINATION = 128;
    public static final int MAX_KINDS = 32;
    private static final String[] CLASSES = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

    private final String service;
    /** Index 0 outbound, 1 inbound; then destination → route → stats. */
    @SuppressWarnings("unchecked")
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Stats>>[] byDirection = new ConcurrentHashMap[]{
            new ConcurrentHashMap<>(), new ConcurrentHashMap<>()};
    private static final String[] DIRECTIONS = {"outbound", "inbound"};

    public RouteMetrics(String service) {
        this.service = service;
    }

    /** Counters of one (direction, destination, route). */
    public static final class Stats {
        final LongAdder[] requests = new LongAdder[CLASSES.length];
        final AtomicReferenceArray<LatencyHistogram> latency = new AtomicReferenceArray<>(CLASSES.length);
        final LongAdder bytesIn = new LongAdder();
        final LongAdder bytesOut = new LongAdder();
        final LongAdder retries = new LongAdder();
        final ConcurrentHashMap<String, LongAdder> errors = new ConcurrentHashMap<>(4);

        Stats() {
            for (int i = 0; i < requests.length; i++) {
                requests[i] = new LongAdder();
            }
        }

        /**
         * @param status  HTTP status sent downstream
         * @param micros  whole exchange, request arrival to last answer byte
         * @param retries attempts beyond the first
         * @param error   the sidecar's own error kind, or null
         */
        public void record(int status, long micros, long bytesIn, long bytesOut, int retries, String error) {
            int c = status >= 100 && status <= 599 ? status / 100 : 0;
            requests[c].increment();
            LatencyHistogram h = latency.get(c);
            if (h == null) {
                latency.compareAndSet(c, null, new LatencyHistogram());
                h = latency.get(c);
            }
            h.record(micros);
            if (bytesIn > 0) {
                this.bytesIn.add(bytesIn);
            }
            if (bytesOut > 0) {
                this.bytesOut.add(bytesOut);
            }
            if (retries > 0) {
                this.retries.add(retries);
            }
            if (error != null) {
                LongAdder a = errors.get(error);
                if (a == null) {
                    a = errors.size() < MAX_KINDS ? errors.computeIfAbsent(error, k -> new LongAdder())
                            : errors.computeIfAbsent(OTHER, k -> new LongAdder());
                }
                a.increment();
            }
        }
    }

    /**
     * The stats for a key, created on first use. Callers may keep the result: the same key always maps to the same
     * object.
     *
     * @param inbound     false for outbound
     * @param destination destination service (the local service for inbound)
     * @param route       route name from the route table, or a policy route
     */
    public Stats stats(boolean inbound, String destination, String route) {
        ConcurrentHashMap<String, ConcurrentHashMap<String, Stats>> dsts = byDirection[inbound ? 1 : 0];
        ConcurrentHashMap<String, Stats> routes = dsts.get(destination);
        if (routes == null) {
            String key = dsts.size() < MAX_DESTINATIONS ? destination : OTHER;
            routes = dsts.computeIfAbsent(key, k -> new ConcurrentHashMap<>());
        }
        Stats s = routes.get(route);
        if (s == null) {
            String key = routes.size() < MAX_ROUTES_PER_DESTINATION ? route : OTHER;
            s = routes.computeIfAbsent(key, k -> new Stats());
        }
        return s;
    }

    /** One rendered key: for walking the series in a fixed order. */
    private interface Visitor {
        void visit(String direction, String dst, String route, Stats s);
    }

    private void each(Visitor v) {
        for (int d = 0; d < 2; d++) {
            for (Map.Entry<String, ConcurrentHashMap<String, Stats>> dst : new java.util.TreeMap<>(byDirection[d]).entrySet()) {
                for (Map.Entry<String, Stats> r : new java.util.TreeMap<>(dst.getValue()).entrySet()) {
                    v.visit(DIRECTIONS[d], dst.getKey(), r.getKey(), r.getValue());
                }
            }
        }
    }

    public void render(PrometheusText p) {
        each((dir, dst, route, s) -> {
            for (int c = 0; c < CLASSES.length; c++) {
                long n = s.requests[c].sum();
                if (n > 0) {
                    p.counter("weft_route_requests_total",
                            "Requests finished, per direction, destination service, route and status class.", n,
                            "direction", dir, "service", service, "dst_service", dst, "route", route,
                            "status_class", CLASSES[c]);
                }
            }
        });
        each((dir, dst, route, s) -> {
            for (int c = 0; c < CLASSES.length; c++) {
                LatencyHistogram h = s.latency.get(c);
                if (h != null) {
                    p.histogram("weft_route_request_duration_seconds",
                            "Request latency from arrival at the sidecar to the last answer byte, per direction,"
                                    + " destination service, route and status class.", h,
                            "direction", dir, "service", service, "dst_service", dst, "route", route,
                            "status_class", CLASSES[c]);
                }
            }
        });
        each((dir, dst, route, s) -> {
            p.counter("weft_route_body_bytes_total", "Body bytes carried, per route (in = request, out = answer).",
                    s.bytesIn.sum(), "direction", dir, "service", service, "dst_service", dst, "route", route,
                    "flow", "in");
            p.counter("weft_route_body_bytes_total", "", s.bytesOut.sum(), "direction", dir, "service", service,
                    "dst_service", dst, "route", route, "flow", "out");
        });
        each((dir, dst, route, s) -> p.counter("weft_route_retries_total",
                "Extra attempts (admissions beyond the first) made for requests of a route.", s.retries.sum(),
                "direction", dir, "service", service, "dst_service", dst, "route", route));
        each((dir, dst, route, s) -> {
            for (Map.Entry<String, LongAdder> e : new java.util.TreeMap<>(s.errors).entrySet()) {
                p.counter("weft_route_mesh_errors_total",
                        "Answers the sidecar made itself (shed, no capacity, unreachable...), by kind (x-weft-error).",
                        e.getValue().sum(), "direction", dir, "service", service, "dst_service", dst, "route", route,
                        "kind", e.getKey());
            }
        });
    }
}
