package dev.weft.dataplane.observe;

import dev.weft.registry.weft.ControlPlaneUrl;
import dev.weft.dataplane.metrics.MeshTax;
import dev.weft.dataplane.metrics.PerThread;
import dev.weft.dataplane.metrics.PrometheusText;
import dev.weft.dataplane.metrics.RouteMetrics;
import dev.weft.registry.auth.ControlCredentials;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.ThreadExecutorMap;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A sidecar's observability: the {@link ExchangeObserver} that turns every exchange into golden metrics, a span
 * (when sampled) and an access log line (when logging), plus the mesh's own cost. Built from
 * {@link ObservabilityConfig}; one per sidecar.
 *
 * <p>Per request, on the Worker loop: {@link #start} takes one {@link ObservedExchange} (one the exporter gave back,
 * or a new one), matches the route (a
 * prefix scan), and with tracing on reads the caller's trace headers and writes the next hop's (two or three small
 * strings); {@link ObservedExchange#end} counts in the Worker's own cells ({@link PerThread}) and hands a sampled
 * exchange to the span exporter through the Worker's own ring ({@link SpanRing}), a logged one to the access log's
 * lock-free bounded queue. No lock, nothing written per request that another Worker writes, no formatting, no I/O
 * on the loop: spans and log lines are encoded by their own threads.
 *
 * <p>Threads: exchange callbacks on Workers; {@link #open}/{@link #close} on the sidecar's lifecycle thread; the
 * "weft-observe" scheduler samples the mesh tax and recalibrates the span clock every second; rendering on an
 * admin request's Worker. Buffers: none; only header strings and counters are touched.
 */
public final class Observability implements ExchangeObserver, AutoCloseable {
    /** Spans waiting for export at most, per Worker; beyond, spans are dropped and counted. */
    public static final int SPAN_QUEUE = 16_384;
    public static final int SPAN_BATCH = 1_000;
    public static final Duration SPAN_FLUSH = Duration.ofSeconds(1);

    private final ObservabilityConfig config;
    private final RouteTable routes;
    private final TracePropagation propagation;
    private final SpanExporter exporter;
    private final EnumMap<Direction, AccessLog> accessLogs = new EnumMap<>(Direction.class);
    private final AccessLog outboundLog;
    private final AccessLog inboundLog;
    private final RouteMetrics routeMetrics;
    private final MeshTax meshTax;
    private final EpochClock clock = new EpochClock();
    /**
     * Per Worker: traces started, continued, spans offered for export, error spans over their reservoir, then the
     * exchanges sampled by each of {@link TraceSampler}'s reasons (indexes below).
     */
    private final PerThread<long[]> counts = new PerThread<>(() -> new long[SAMPLED_BY + TraceSampler.REASONS.length]);
    private static final int TRACES_STARTED = 0;
    private static final int TRACES_CONTINUED = 1;
    private static final int SPANS_SAMPLED = 2;
    private static final int ERRORS_CAPPED = 3;
    private static final int SAMPLED_BY = 4;
    /** Each Worker's counters cell, spare records and last route cell: found once per exchange, in {@link #start}. */
    private final FastThreadLocal<WorkerCells> workers = new FastThreadLocal<>() {
        @Override
        protected WorkerCells initialValue() {
            return new WorkerCells(ThreadExecutorMap.currentExecutor(), counts);
        }
    };
    private ScheduledExecutorService scheduler;
    /**
     * Set by an operator ({@code POST /observability?state=off} on the admin port, docs/observability.md): while set,
     * {@link #start} observes nothing and trace headers pass through untouched, as with {@code --tracing off
     * --metrics off}. One volatile read per exchange; written on the admin's loop. It lets {@code weft bench
     * observability} price observability on the same processes, window by window, instead of across restarts.
     */
    private volatile boolean paused;
    private final AtomicLong switches = new AtomicLong();

    /**
     * @param registryUrl the sidecar's registry: {@code auto} sends spans to a {@code weft://} control plane
     * @param hops        requests this sidecar finished (inbound + outbound), for the mesh tax
     */
    public Observability(ObservabilityConfig config, String service, String registryUrl, LongSupplier hops) {
        this(config, service, registryUrl, hops, null);
    }

    /**
     * What span batches to the sidecar's own control plane prove the sidecar with (its intake wants credentials,
     * docs/security.md): the join token as a bearer, held in memory, while the control plane takes it, then (once it
     * answers 401: the token expired) {@code signed}, a signature per batch with the mesh key. Either may be null.
     */
    public record SpanCredentials(ControlCredentials bearer, ControlCredentials signed) {}

    /**
     * @param spanCredentials sent with each span batch only when the spans go to the control plane of the
     *                        {@code weft://} registry, never to another collector; null for none
     */
    public Observability(ObservabilityConfig config, String service, String registryUrl, LongSupplier hops,
                         SpanCredentials spanCredentials) {
        this.config = config;
        this.routes = new RouteTable(config.routes());
        this.propagation = config.tracing() ? new TracePropagation(config.propagation(),
                new TraceSampler(config.traceReservoir(), config.traceSample())) : null;
        URI endpoint = config.resolveTraceEndpoint(registryUrl);
        boolean toControlPlane = endpoint != null && isControlPlane(endpoint, registryUrl);
        this.exporter = endpoint == null ? null : new SpanExporter(endpoint, SpanEncoder.named(config.traceFormat()),
                SPAN_QUEUE, SPAN_BATCH, SPAN_FLUSH, toControlPlane ? spanCredentials : null,
                // Spans to a control plane serving TLS trust it as its registry URL says; a collector its defaults.
                toControlPlane ? ControlPlaneUrl.parse(registryUrl).trust() : null);
        this.routeMetrics = config.metrics() ? new RouteMetrics(service) : null;
        this.meshTax = config.metrics() ? new MeshTax(hops) : null;
        try {
            for (Map.Entry<Direction, String> e : config.accessLogs().entrySet()) {
                accessLogs.put(e.getKey(), AccessLog.open(e.getKey(), e.getValue()));
            }
        } catch (IOException e) {
            accessLogs.values().forEach(AccessLog::close);
            throw new UncheckedIOException("cannot open access log: " + e.getMessage(), e);
        }
        this.outboundLog = accessLogs.get(Direction.OUTBOUND);
        this.inboundLog = accessLogs.get(Direction.INBOUND);
    }

    /**
     * Whether {@code endpoint} is served by the control plane of the {@code weft://} (or {@code weft+tls://}) registry:
     * same host and port, and https exactly when the registry is TLS.
     */
    static boolean isControlPlane(URI endpoint, String registryUrl) {
        if (!ControlPlaneUrl.isControlPlane(registryUrl)) {
            return false;
        }
        ControlPlaneUrl control = ControlPlaneUrl.parse(registryUrl);
        return control.httpBase().equalsIgnoreCase(endpoint.getScheme() + "://" + endpoint.getRawAuthority());
    }

    /** Whether anything is observed at all; when not, the sidecar uses {@link ExchangeObserver#NOOP} instead. */
    public boolean isActive() {
        return routeMetrics != null || propagation != null || !accessLogs.isEmpty();
    }

    /**
     * Starts the background threads and learns which threads are the data path.
     *
     * @param loops the sidecar's event loop groups (Manager and Workers), whose threads' cost is the mesh tax
     */
    public void open(List<EventLoopGroup> loops) {
        if (exporter != null) {
            exporter.start();
        }
        accessLogs.values().forEach(AccessLog::start);
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("weft-observe")
                .unstarted(r));
        if (meshTax != null) {
            meshTax.setEventLoopThreads(threadIds(loops));
            meshTax.sample();
            scheduler.scheduleAtFixedRate(meshTax::sample, 1, 1, TimeUnit.SECONDS);
        }
        scheduler.scheduleAtFixedRate(clock::calibrate, 1, 1, TimeUnit.SECONDS);
    }

    private static long[] threadIds(List<EventLoopGroup> groups) {
        List<Long> ids = new ArrayList<>();
        for (EventLoopGroup g : groups) {
            for (EventExecutor e : g) {
                try {
                    ids.add(e.submit(() -> Thread.currentThread().threadId()).get(2, TimeUnit.SECONDS));
                } catch (Exception ex) {
                    // A loop that does not answer within 2 s is not running requests either; it is left out.
                }
            }
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    /**
     * Pauses ({@code true}) or resumes everything this object observes: exchanges that start while paused are not
     * counted, traced or logged; those already started finish as they began.
     *
     * @return whether the state changed
     */
    public boolean pause(boolean pause) {
        if (paused == pause) {
            return false;
        }
        paused = pause;
        switches.incrementAndGet();
        return true;
    }

    public boolean paused() {
        return paused;
    }

    @Override
    public ExchangeTrace start(Direction direction, String localService, String method, String path,
                               HeaderAccess headers, String peer, long startNanos) {
        if (paused) {
            return ExchangeTrace.NOOP;
        }
        String route = routes.match(method, path);
        WorkerCells worker = workers.get();
        // A record the Worker's own last exchanges left (most, once most are not sampled), else one the exporter
        // gave back, else a new one.
        ObservedExchange x = worker.take();
        if (x == null && exporter != null) {
            x = exporter.spare();
        }
        if (x != null) {
            x.begin(worker, direction, localService, method, path, peer, route, startNanos,
                    clock.epochMicros(startNanos));
        } else {
            x = new ObservedExchange(this, worker, direction, localService, method, path, peer, route, startNanos,
                    clock.epochMicros(startNanos));
        }
        if (propagation != null) {
            propagation.propagate(headers, x, startNanos);
            worker.increment(x.traceStarted ? TRACES_STARTED : TRACES_CONTINUED, SAMPLED_BY + x.sampleReason);
        }
        x.timed = x.isSampled() || (direction == Direction.OUTBOUND ? outboundLog : inboundLog) != null;
        return x;
    }

    /** Called once by each exchange as it ends, on its Worker. */
    void finished(ObservedExchange x) {
        if (routeMetrics != null) {
            x.worker.record(routeMetrics, x);
        }
        AccessLog log = x.direction == Direction.OUTBOUND ? outboundLog : inboundLog;
        boolean exported = exporter != null && export(x, log == null);
        if (log != null) {
            log.offer(x);
        } else if (!exported) {
            x.worker.giveBack(x); // nothing reads it any more: the Worker's next exchanges may
        }
    }

    /**
     * Hands {@code x} to the exporter when its trace is sampled, or, when it failed unsampled, alone within the
     * error reservoir, so failures stay visible.
     *
     * @param reusable whether nothing else reads {@code x} after the exporter (no access log): it may give it back
     * @return whether it was handed over
     */
    private boolean export(ObservedExchange x, boolean reusable) {
        if (!x.isSampled()) {
            if (!x.failed() || propagation == null) {
                return false;
            }
            if (!propagation.sampler().exportError(x.endNanos)) {
                x.worker.count(ERRORS_CAPPED);
                return false;
            }
            x.sampleReason = TraceSampler.ERROR;
            x.worker.count(SAMPLED_BY + TraceSampler.ERROR);
        }
        x.worker.count(SPANS_SAMPLED);
        exporter.offer(x, reusable);
        return true;
    }

    private long sum(int counter) {
        return counts.sum(c -> PerThread.read(c, counter));
    }

    /** Appends this sidecar's observability metrics to /metrics. */
    public void render(PrometheusText p) {
        p.gauge("weft_observability_paused", "1 while an operator has paused this sidecar's metrics, traces and access"
                + " logs (POST /observability?state=off on the admin port), else 0.", paused ? 1 : 0);
        p.counter("weft_observability_switches_total", "Times observability was paused or resumed.", switches.get());
        if (routeMetrics != null) {
            routeMetrics.render(p);
        }
        if (meshTax != null) {
            meshTax.render(p);
        }
        if (propagation != null) {
            p.counter("weft_traces_total", "Exchanges by trace origin: started here (no context arrived) or continued.",
                    sum(TRACES_STARTED), "origin", "started");
            p.counter("weft_traces_total", "", sum(TRACES_CONTINUED), "origin", "continued");
            for (int r = TraceSampler.RESERVOIR; r < TraceSampler.REASONS.length; r++) {
                p.counter("weft_trace_sampled_total", r == TraceSampler.RESERVOIR ? "Exchanges exported as spans, by"
                        + " why: reservoir (a new trace within the reservoir), ratio (beyond it), peer (a mesh peer's"
                        + " decision, or the app continuing a trace this sidecar took in sampled), caller (an app's or"
                        + " client's decision, within the reservoir), error (failed, not sampled: its span alone)." : "",
                        sum(SAMPLED_BY + r), "reason", TraceSampler.REASONS[r]);
            }
            p.counter("weft_trace_not_sampled_total", "Exchanges whose trace was not sampled (the context still"
                    + " travels, marked so; a failed one may still be exported alone, as reason error).",
                    sum(SAMPLED_BY + TraceSampler.NONE));
            p.counter("weft_trace_capped_total", "Decisions over their reservoir: an app's or client's 'sampled'"
                    + " (then decided by the ratio), or a failed exchange's span (not exported).",
                    propagation.sampler().callersCapped(), "what", "caller");
            p.counter("weft_trace_capped_total", "", sum(ERRORS_CAPPED), "what", "error");
        }
        if (exporter != null) {
            p.counter("weft_spans_sampled_total", "Spans handed to the exporter: sampled, and failures exported alone.",
                    sum(SPANS_SAMPLED));
            p.counter("weft_spans_exported_total", "Spans the collector accepted.", exporter.exported());
            p.counter("weft_spans_dropped_total", "Spans dropped, by reason (the export queue was full, the"
                    + " collector failed or refused the batch, or it took the batch but not these spans).", exporter.droppedQueueFull(), "reason", "queue_full");
            p.counter("weft_spans_dropped_total", "", exporter.droppedExportFailed(), "reason", "export_failed");
            p.counter("weft_spans_dropped_total", "", exporter.droppedRefused(), "reason", "refused");
            p.gauge("weft_span_queue_depth", "Spans waiting for export.", exporter.queued());
        }
        for (AccessLog log : accessLogs.values()) {
            String side = log.side() == Direction.OUTBOUND ? "outbound" : "inbound";
            p.counter("weft_access_log_lines_total", "Access log lines written, by side.", log.written(), "direction", side);
        }
        for (AccessLog log : accessLogs.values()) {
            String side = log.side() == Direction.OUTBOUND ? "outbound" : "inbound";
            p.counter("weft_access_log_dropped_total", "Access log lines dropped because the sink was slower than"
                    + " the traffic (requests never wait for the log).", log.dropped(), "direction", side);
        }
    }

    /** For /config. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("metrics", config.metrics());
        m.put("tracing", config.tracing());
        m.put("traceSample", config.traceSample());
        m.put("traceReservoir", config.traceReservoir() + "/s");
        m.put("traceEndpoint", exporter == null ? null : exporter.endpoint().toString());
        m.put("traceFormat", config.traceFormat());
        m.put("propagation", config.propagation().stream().map(e -> e.name().toLowerCase()).sorted().toList());
        if (exporter != null) {
            m.put("spansExported", exporter.exported());
            m.put("spansDropped", exporter.droppedQueueFull() + exporter.droppedExportFailed()
                    + exporter.droppedRefused());
            m.put("lastExportError", exporter.lastError());
        }
        Map<String, String> logs = new LinkedHashMap<>();
        accessLogs.forEach((d, l) -> logs.put(d.name().toLowerCase(), l.sink()));
        m.put("accessLogs", logs);
        m.put("routes", config.routes().stream().map(r -> r.name() + "=" + (r.method() == null ? "" : r.method() + ":")
                + r.prefix()).toList());
        if (meshTax != null) {
            m.put("meshTaxThreads", meshTax.eventLoopThreads());
        }
        return m;
    }

    /** Sends queued spans and log lines (bounded waits), then stops the threads. */
    @Override
    public void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (exporter != null) {
            exporter.close();
        }
        accessLogs.values().forEach(AccessLog::close);
    }
}
