package dev.weft.dataplane.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The golden metrics of one sidecar: per direction, destination service, route and status class, the requests,
 * their latency, body bytes, retries and the sidecar's own errors.
 *
 * <p>Cardinality is bounded: destinations by {@link #MAX_DESTINATIONS} (the router's own cap on distinct services
 * is lower), routes by the route table plus {@link #MAX_ROUTES_PER_DESTINATION}, error kinds by {@link #MAX_KINDS};
 * anything beyond lands in {@value #OTHER}. Paths are never labels.
 *
 * <p>Threads: {@link Stats#record} runs on every Worker; lookups are lock free (ConcurrentHashMap reads) and each
 * Worker counts in a cell of its own ({@link PerThread}). Rendering runs on the admin request's Worker and only reads.
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

    // A cell's counters, one flat array: requests by status class (0-5), body bytes and retries, the latency sum per
    // status class, then the latency buckets of each status class (LatencyHistogram's bounds, not cumulative).
    private static final int BYTES_IN = 6;
    private static final int BYTES_OUT = 7;
    private static final int RETRIES = 8;
    private static final int SUM_MICROS = 9;
    private static final int BUCKETS = SUM_MICROS + CLASSES.length;
    private static final int BUCKETS_PER_CLASS = LatencyHistogram.BOUNDS_MICROS.length + 1;
    private static final int COUNTERS = BUCKETS + CLASSES.length * BUCKETS_PER_CLASS;

    /**
     * Counters of one (direction, destination, route). Each Worker writes a cell of its own ({@link PerThread}), read
     * and summed by the scrape; the error kinds, rare, are LongAdders shared by all.
     */
    public static final class Stats {
        final PerThread<long[]> cells = new PerThread<>(() -> new long[COUNTERS]);
        final ConcurrentHashMap<String, LongAdder> errors = new ConcurrentHashMap<>(4);

        /**
         * @param status  HTTP status sent downstream
         * @param micros  whole exchange, request arrival to last answer byte
         * @param retries attempts beyond the first
         * @param error   the sidecar's own error kind, or null
         */
        public void record(int status, long micros, long bytesIn, long bytesOut, int retries, String error) {
            long[] c = cells.get();
            if (cells.isShared(c)) {
                synchronized (c) {
                    record(c, status, micros, bytesIn, bytesOut, retries);
                }
            } else {
                record(c, status, micros, bytesIn, bytesOut, retries);
            }
            countError(error);
        }

        /**
         * The calling thread's own cell, for {@link #recordOwn}, or null when it shares one (then use
         * {@link #record}). The same cell on every call from the same thread.
         */
        public long[] ownCell() {
            long[] c = cells.get();
            return cells.isShared(c) ? null : c;
        }

        /** {@link #record} into a cell {@link #ownCell} gave this thread: for a caller that keeps it. */
        public void recordOwn(long[] ownCell, int status, long micros, long bytesIn, long bytesOut, int retries,
                              String error) {
            record(ownCell, status, micros, bytesIn, bytesOut, retries);
            countError(error);
        }

        private void countError(String error) {
            if (error != null) {
                LongAdder a = errors.get(error);
                if (a == null) {
                    a = errors.size() < MAX_KINDS ? errors.computeIfAbsent(error, k -> new LongAdder())
                            : errors.computeIfAbsent(OTHER, k -> new LongAdder());
                }
                a.increment();
            }
        }

        private static void record(long[] c, int status, long micros, long bytesIn, long bytesOut, int retries) {
            int k = status >= 100 && status <= 599 ? status / 100 : 0;
            int i = 0;
            // A linear scan beats a binary search over 17 bounds, and most requests stop in the first few.
            while (i < LatencyHistogram.BOUNDS_MICROS.length && micros > LatencyHistogram.BOUNDS_MICROS[i]) {
                i++;
            }
            PerThread.add(c, BUCKETS + k * BUCKETS_PER_CLASS + i, 1);
            PerThread.add(c, SUM_MICROS + k, Math.max(0, micros));
            PerThread.add(c, k, 1);
            if (bytesIn > 0) {
                PerThread.add(c, BYTES_IN, bytesIn);
            }
            if (bytesOut > 0) {
                PerThread.add(c, BYTES_OUT, bytesOut);
            }
            if (retries > 0) {
                PerThread.add(c, RETRIES, retries);
            }
        }

        long sum(int counter) {
            return cells.sum(c -> PerThread.read(c, counter));
        }

        /** Counts per latency bucket of a status class (not cumulative), over every cell. */
        long[] buckets(int statusClass) {
            long[] sum = new long[BUCKETS_PER_CLASS];
            for (int i = 0; i < sum.length; i++) {
                sum[i] = sum(BUCKETS + statusClass * BUCKETS_PER_CLASS + i);
            }
            return sum;
        }

        long sumMicros(int statusClass) {
            return sum(SUM_MICROS + statusClass);
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
                long n = s.sum(c);
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
                // As the requests: a status class no request ended with has no series.
                if (s.sum(c) > 0) {
                    long[] h = s.buckets(c);
                    p.histogram("weft_route_request_duration_seconds",
                            "Request latency from arrival at the sidecar to the last answer byte, per direction,"
                                    + " destination service, route and status class.", h, s.sumMicros(c),
                            "direction", dir, "service", service, "dst_service", dst, "route", route,
                            "status_class", CLASSES[c]);
                }
            }
        });
        each((dir, dst, route, s) -> {
            p.counter("weft_route_body_bytes_total", "Body bytes carried, per route (in = request, out = answer).",
                    s.sum(BYTES_IN), "direction", dir, "service", service, "dst_service", dst, "route", route,
                    "flow", "in");
            p.counter("weft_route_body_bytes_total", "", s.sum(BYTES_OUT), "direction", dir, "service", service,
                    "dst_service", dst, "route", route, "flow", "out");
        });
        each((dir, dst, route, s) -> p.counter("weft_route_retries_total",
                "Extra attempts (admissions beyond the first) made for requests of a route.", s.sum(RETRIES),
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
