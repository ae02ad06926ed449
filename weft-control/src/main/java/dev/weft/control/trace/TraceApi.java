package dev.weft.control.trace;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.GZIPInputStream;

/**
 * The control plane's span collector and trace queries: the subset of Zipkin's v2 HTTP API that sidecars,
 * Zipkin-instrumented apps, {@code ./weft trace} and Zipkin-compatible tools use.
 *
 * <pre>
 *   POST /api/v2/spans                      a JSON array of Zipkin v2 spans (gzip accepted)  → 202 (with a body
 *                                           counting the spans refused, when some were: {@link #SPAN_NOT_SENDERS})
 *   GET  /api/v2/services                   service names
 *   GET  /api/v2/spans?serviceName=S        span names of S
 *   GET  /api/v2/remoteServices?serviceName=S
 *   GET  /api/v2/traces?serviceName&amp;spanName&amp;remoteServiceName&amp;minDuration&amp;maxDuration&amp;endTs&amp;lookback&amp;limit&amp;annotationQuery=error
 *   GET  /api/v2/trace/{traceId}
 *   GET  /api/v2/traceMany?traceIds=A,B
 *   GET  /api/v2/dependencies?endTs&amp;lookback
 *   GET  /api/v2/weft/store                 the store's size, capacity and evictions
 * </pre>
 *
 * <p>Threading: the {@link SpanStore} is confined to one thread, "weft-control-spans", which parses posted batches
 * and answers queries; the event loops only hand requests to it. Its queue is bounded: when spans arrive faster
 * than they can be stored, a post is answered 503 at once and the sender drops (and counts) that batch.
 */
public final class TraceApi implements AutoCloseable {
    /** Largest span batch accepted, after decompression. */
    public static final int MAX_BODY_BYTES = 16 * 1024 * 1024;
    private static final int QUEUE = 64;
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * Why a posted span was not stored: a sidecar proven to be of service S posted a span whose own service
     * ({@code localEndpoint.serviceName}) is not S. The {@code reason} of {@code weft_control_spans_refused_total}
     * and the {@code code} of the post's answer.
     */
    public static final String SPAN_NOT_SENDERS = "span-not-senders";

    /** An HTTP answer: status and JSON body (empty for a 202 that stored every span). */
    public record Answer(int status, byte[] json) {}

    private final SpanStore store;
    private final ThreadPoolExecutor thread;
    private final LongAdder rejectedBatches = new LongAdder();
    /** Added to on the spans thread, read by /metrics on an event loop. */
    private final LongAdder refusedNotSenders = new LongAdder();

    public TraceApi(int maxSpans) {
        this.store = new SpanStore(maxSpans);
        this.thread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE),
                r -> Thread.ofPlatform().daemon().name("weft-control-spans").unstarted(r));
    }

    /**
     * Handles one API request; completes on the spans thread (or at once when refused).
     *
     * @param path     segments after {@code /api/v2}
     * @param params   query parameters (first value of each)
     * @param encoding the request's Content-Encoding, or null
     * @param sender   for a post: the service of the sidecar whose credentials it carries, whose spans alone are
     *                 stored; null stores every span (the operator, or a post from loopback: docs/security.md)
     */
    public CompletableFuture<Answer> handle(String method, List<String> path, Map<String, String> params, byte[] body,
                                            String encoding, String sender) {
        try {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    return route(method, path, params, body, encoding, sender);
                } catch (IllegalArgumentException e) {
                    return error(400, "bad-request", e.getMessage());
                }
            }, thread);
        } catch (RejectedExecutionException e) {
            rejectedBatches.increment();
            return CompletableFuture.completedFuture(error(503, "busy",
                    "the span store is behind (" + QUEUE + " requests queued); this batch was not stored"));
        }
    }

    /**
     * Runs {@code query} on the spans thread, which owns the store (for {@code /v1/diagnose}, which copies what it
     * needs here and does its work elsewhere). Refused at once, like a post, when that thread is behind.
     */
    public <T> CompletableFuture<T> read(java.util.function.Function<SpanStore, T> query) {
        try {
            return CompletableFuture.supplyAsync(() -> query.apply(store), thread);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Answer route(String method, List<String> path, Map<String, String> params, byte[] body, String encoding,
                         String sender) {
        String what = path.isEmpty() ? "" : path.getFirst();
        if (method.equals("POST")) {
            if (path.size() == 1 && what.equals("spans")) {
                int refused = store.add(decode(body, encoding), sender);
                if (refused == 0) {
                    return new Answer(202, new byte[0]);
                }
                // Still 202: the sender's own spans were stored, and a sidecar's exporter counts any 2xx as sent and
                // never posts a batch twice; the body says what was left out, and why.
                refusedNotSenders.add(refused);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("refused", refused);
                m.put("code", SPAN_NOT_SENDERS);
                m.put("error", refused + " span(s) of this batch were not stored: their localEndpoint.serviceName is"
                        + " not '" + sender + "', the service whose credentials posted them (a sidecar posts only its"
                        + " own service's spans; the operator token posts any)");
                return new Answer(202, json(m).json());
            }
            return error(405, "method-not-allowed", "POST is only accepted on /api/v2/spans");
        }
        if (!method.equals("GET")) {
            return error(405, "method-not-allowed", "method " + method + " not allowed (allowed: GET, or POST on"
                    + " /api/v2/spans)");
        }
        switch (what) {
            case "services" -> {
                return json(store.services());
            }
            case "spans" -> {
                return json(store.spanNames(required(params, "serviceName").toLowerCase(Locale.ROOT), false));
            }
            case "remoteServices" -> {
                return json(store.spanNames(required(params, "serviceName").toLowerCase(Locale.ROOT), true));
            }
            case "trace" -> {
                if (path.size() != 2) {
                    return notFound();
                }
                SpanStore.Trace t = store.trace(path.get(1).toLowerCase(Locale.ROOT));
                if (t == null) {
                    return error(404, "unknown-trace", "trace " + path.get(1) + " not found (it was never received"
                            + " or was evicted; the store keeps " + store.capacity() + " spans)");
                }
                return new Answer(200, traceJson(t));
            }
            case "traceMany" -> {
                List<SpanStore.Trace> found = new ArrayList<>();
                for (String id : required(params, "traceIds").split(",")) {
                    SpanStore.Trace t = store.trace(id.trim().toLowerCase(Locale.ROOT));
                    if (t != null) {
                        found.add(t);
                    }
                }
                return new Answer(200, tracesJson(found));
            }
            case "traces" -> {
                return new Answer(200, tracesJson(queryTraces(params)));
            }
            case "dependencies" -> {
                long[] window = window(params);
                return json(store.dependencies(window[0], window[1]));
            }
            case "weft" -> {
                if (path.size() == 2 && path.get(1).equals("store")) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("spans", store.spanCount());
                    m.put("traces", store.traceCount());
                    m.put("protectedTraces", store.protectedTraceCount());
                    m.put("capacitySpans", store.capacity());
                    m.put("acceptedSpans", store.accepted());
                    m.put("evictedTraces", store.evictedTraces());
                    m.put("droppedOverTraceLimit", store.droppedOverTraceLimit());
                    m.put("droppedTooLarge", store.droppedTooLarge());
                    m.put("rejectedBatches", rejectedBatches.sum());
                    m.put("refusedNotSenders", refusedNotSenders.sum());
                    return json(m);
                }
                return notFound();
            }
            default -> {
                return notFound();
            }
        }
    }

    /** The collector's counters for the control plane's {@code /metrics}; any thread. */
    public String metricsText() {
        return "# HELP weft_control_spans_refused_total Posted spans not stored, by reason (" + SPAN_NOT_SENDERS
                + ": a span whose localEndpoint.serviceName is not the service of the sidecar that posted it).\n"
                + "# TYPE weft_control_spans_refused_total counter\n"
                + "weft_control_spans_refused_total{reason=\"" + SPAN_NOT_SENDERS + "\"} " + refusedNotSenders.sum()
                + "\n";
    }

    private List<SpanStore.Trace> queryTraces(Map<String, String> params) {
        String service = lowerOrNull(params.get("serviceName"));
        String spanName = lowerOrNull(params.get("spanName"));
        if ("all".equals(spanName)) {
            spanName = null;
        }
        String remote = lowerOrNull(params.get("remoteServiceName"));
        long minDuration = longParam(params, "minDuration", 0);
        long maxDuration = longParam(params, "maxDuration", Long.MAX_VALUE);
        int limit = (int) Math.min(10_000, longParam(params, "limit", 10));
        String annotationQuery = params.get("annotationQuery");
        boolean errorsOnly = false;
        if (annotationQuery != null && !annotationQuery.isBlank()) {
            if (!annotationQuery.trim().equals("error")) {
                throw new IllegalArgumentException("unsupported annotationQuery '" + annotationQuery
                        + "' (supported: error)");
            }
            errorsOnly = true;
        }
        long[] window = window(params);
        return store.query(new SpanStore.Filter(service, spanName, remote, minDuration, maxDuration, errorsOnly),
                window[0], window[1], limit);
    }

    /** [from, to] in epoch microseconds from Zipkin's endTs and lookback (milliseconds). */
    private static long[] window(Map<String, String> params) {
        long endTs = longParam(params, "endTs", System.currentTimeMillis());
        long lookback = longParam(params, "lookback", endTs);
        return new long[]{Math.max(0, endTs - lookback) * 1000, endTs * 1000 + 999};
    }

    private static long longParam(Map<String, String> params, String name, long fallback) {
        String v = params.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + " '" + v + "' (expected a whole number >= 0)");
        }
    }

    private static String required(Map<String, String> params, String name) {
        String v = params.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("missing query parameter '" + name + "'");
        }
        return v;
    }

    private static String lowerOrNull(String s) {
        return s == null || s.isBlank() ? null : s.trim().toLowerCase(Locale.ROOT);
    }

    private static byte[] decode(byte[] body, String encoding) {
        if (encoding == null || encoding.isBlank() || encoding.equalsIgnoreCase("identity")) {
            return body;
        }
        if (!encoding.equalsIgnoreCase("gzip")) {
            throw new IllegalArgumentException("unsupported Content-Encoding '" + encoding + "' (expected gzip or none)");
        }
        try (InputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(body))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(body.length * 4);
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                if (out.size() + n > MAX_BODY_BYTES) {
                    throw new IllegalArgumentException("span batch over " + MAX_BODY_BYTES + " bytes once decompressed");
                }
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed gzip body: " + e.getMessage());
        }
    }

    private static byte[] traceJson(SpanStore.Trace t) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(t.spans().size() * 900 + 2);
        SpanStore.writeTrace(t, out);
        return out.toByteArray();
    }

    private static byte[] tracesJson(List<SpanStore.Trace> traces) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        out.write('[');
        for (int i = 0; i < traces.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            SpanStore.writeTrace(traces.get(i), out);
        }
        out.write(']');
        return out.toByteArray();
    }

    private static Answer json(Object value) {
        try {
            return new Answer(200, MAPPER.writeValueAsBytes(value));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Answer notFound() {
        return error(404, "not-found", "no such trace API route (routes: POST /api/v2/spans, GET /api/v2/services,"
                + " /api/v2/spans, /api/v2/remoteServices, /api/v2/traces, /api/v2/trace/{id}, /api/v2/traceMany,"
                + " /api/v2/dependencies, /api/v2/weft/store)");
    }

    static Answer error(int status, String code, String message) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("error", message);
        m.put("code", code);
        return new Answer(status, json(m).json());
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
