package dev.weft.control.diagnose;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlBackend;
import dev.weft.control.trace.SpanStore;
import dev.weft.control.trace.TraceApi;
import dev.weft.registry.support.Durations;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /v1/diagnose?window=30s&baseline=5m}: culprit finding over the control plane's span store, as JSON
 * ({@link Diagnosis}).
 *
 * <p>Threads: the recent traces of the window and baseline are copied on the spans thread (which owns the store, a
 * memory copy); their parsing and the analysis run on this API's own thread, "weft-control-diagnose", never on an
 * event loop or the spans thread, so a diagnosis delays neither requests nor span ingestion. Its queue holds
 * {@value #QUEUE} requests; beyond, 503 at once. The work is bounded by the store's capacity.
 */
public final class DiagnoseApi implements AutoCloseable {
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(30);
    public static final Duration DEFAULT_BASELINE = Duration.ofMinutes(5);
    /**
     * The newest spans are left out: each sidecar exports its spans at least once a second, so a trace's spans arrive
     * from its sidecars up to about a second apart, and a span whose children have not arrived yet looks as if it
     * spent their time itself (or originated their errors). Measured on the four-tier test before this existed: with
     * a 4 s window, services that only waited on a slow callee showed p90 self times grown by 9 to 14 ms.
     */
    static final Duration SETTLE = Duration.ofSeconds(2);
    static final Duration MAX_WINDOW = Duration.ofHours(1);
    static final Duration MAX_BASELINE = Duration.ofHours(24);
    private static final Set<String> PARAMS = Set.of("window", "baseline");
    private static final int QUEUE = 4;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** An HTTP answer: status and JSON body. */
    public record Answer(int status, byte[] json) {}

    private final TraceApi traces;
    private final ControlBackend backend;
    private final ThreadPoolExecutor thread;

    public DiagnoseApi(TraceApi traces, ControlBackend backend) {
        this.traces = traces;
        this.backend = backend;
        this.thread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE),
                r -> Thread.ofPlatform().daemon().name("weft-control-diagnose").unstarted(r));
    }

    /**
     * Answers one request; completes on the diagnose thread, or at once for a refusal.
     *
     * @param params the query parameters (first value of each)
     */
    public CompletableFuture<Answer> handle(Map<String, String> params) {
        Duration window;
        Duration baseline;
        try {
            for (String name : params.keySet()) {
                if (!PARAMS.contains(name)) {
                    throw new IllegalArgumentException("unknown query parameter '" + name + "' (known: "
                            + String.join(", ", new TreeSet<>(PARAMS)) + ")");
                }
            }
            window = duration(params, "window", DEFAULT_WINDOW, Duration.ofSeconds(1), MAX_WINDOW);
            baseline = duration(params, "baseline", DEFAULT_BASELINE, Duration.ZERO, MAX_BASELINE);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(error(400, "bad-request", e.getMessage()));
        }
        if (traces == null) {
            return CompletableFuture.completedFuture(error(404, "not-found",
                    "this control plane collects no spans (started with --trace-store-spans 0): nothing to diagnose"));
        }
        long now = (System.currentTimeMillis() - SETTLE.toMillis()) * 1000;
        long from = now - window.toNanos() / 1000 - baseline.toNanos() / 1000;
        CompletableFuture<List<SpanStore.Trace>> copied = traces.read(store -> store.recentTraces(from, now + 60_000_000L));
        CompletableFuture<Map<String, String>> policies = backend.policies()
                .thenApply(ControlBackend.Policies::policies)
                .exceptionally(e -> Map.of()); // without the policies, the default rule: still an answer
        return copied.thenCombine(policies, (t, p) -> new Object[]{t, p})
                .thenApplyAsync(both -> {
                    @SuppressWarnings("unchecked")
                    List<SpanStore.Trace> found = (List<SpanStore.Trace>) both[0];
                    @SuppressWarnings("unchecked")
                    Map<String, String> docs = (Map<String, String>) both[1];
                    return answer(diagnose(found, Slos.read(docs), now, window, baseline));
                }, thread)
                .exceptionally(e -> {
                    Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                            ? e.getCause() : e;
                    if (cause instanceof RejectedExecutionException) {
                        return error(503, "busy", "the control plane is busy (span store or diagnosis queue full);"
                                + " try again in a second");
                    }
                    return error(500, "internal", "diagnosis failed: " + cause);
                });
    }

    /** The analysis of these traces; pure apart from parsing the spans' JSON. */
    static Diagnosis diagnose(List<SpanStore.Trace> found, Map<String, Slo> slos, long nowMicros, Duration window,
                              Duration baseline) {
        Analysis a = new Analysis(Analysis.Params.of(nowMicros, window.toNanos() / 1000, baseline.toNanos() / 1000,
                slos));
        for (SpanStore.Trace t : found) {
            List<DiagnoseSpan> spans = new ArrayList<>(t.spans().size());
            for (byte[] json : t.spans()) {
                DiagnoseSpan s = ZipkinSpanReader.read(json);
                if (s != null) {
                    spans.add(s);
                }
            }
            a.add(spans);
        }
        return a.finish();
    }

    private static Duration duration(Map<String, String> params, String name, Duration fallback, Duration min,
                                     Duration max) {
        String v = params.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        Duration d;
        try {
            d = Durations.parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid " + name + " '" + v + "' (expected " + Durations.EXPECTED + ")");
        }
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException("invalid " + name + " '" + v + "' (expected " + Durations.format(min)
                    + " to " + Durations.format(max) + ")");
        }
        return d;
    }

    private static Answer answer(Diagnosis d) {
        try {
            return new Answer(200, JSON.writeValueAsBytes(d));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Answer error(int status, String code, String message) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("error", message);
        m.put("code", code);
        try {
            return new Answer(status, JSON.writeValueAsBytes(m));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
