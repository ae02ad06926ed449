package dev.weft.dataplane.observe;

import dev.weft.registry.weft.ControlPlaneUrl;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;

import java.net.URI;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a sidecar observes and where it sends it. Built from the sidecar's flags (see docs/observability.md).
 *
 * @param metrics       per-route golden metrics and the mesh's own cost at /metrics (the per-direction basics are
 *                      always counted)
 * @param tracing       trace context propagation and spans; off means headers pass through untouched
 * @param traceSample   share of new traces sampled beyond the reservoir (0.0-1.0); a mesh peer's decision is always
 *                      honoured, an outside caller's "sampled" only within the reservoir ({@link TraceSampler})
 * @param traceReservoir new traces a second always sampled, before the ratio applies (0: none); also the error spans
 *                      a second exported from unsampled exchanges
 * @param traceEndpoint where spans go: {@link #AUTO} (the control plane of a {@code weft://} registry, none
 *                      otherwise), {@link #OFF}, or an http(s) URL
 * @param traceFormat   {@code zipkin} (Zipkin v2 JSON) or {@code otlp} (OTLP/HTTP JSON)
 * @param propagation   header formats written on forwarded requests (every format is read)
 * @param accessLogs    access log sink per side: {@code stdout} or a file path; a side absent here logs nothing
 * @param routes        names for path prefixes: the only way a path becomes a metric label
 */
public record ObservabilityConfig(boolean metrics, boolean tracing, double traceSample, int traceReservoir,
                                  String traceEndpoint, String traceFormat, Set<Propagation> propagation, Map<Direction, String> accessLogs,
                                  List<RouteTable.Route> routes) {

    public static final String AUTO = "auto";
    public static final String OFF = "off";
    /**
     * Traces a second a sidecar samples before the ratio: the demo's and the tests' traffic (up to some 200 requests a
     * second through a sidecar) is traced whole, as when every request was, while at saturation (8,000 a second) the
     * spans are 200 + 1 % of the rest, about 3.5 %.
     */
    public static final int DEFAULT_TRACE_RESERVOIR = 200;
    /** Share of the traces beyond the reservoir that are sampled, as Istio's default. */
    public static final double DEFAULT_TRACE_SAMPLE = 0.01;

    /** Trace header formats. */
    public enum Propagation {
        /** W3C Trace Context: traceparent (and tracestate, passed through). */
        W3C,
        /** Zipkin B3, single header: {@code b3: trace-span-sampled}. */
        B3,
        /** Zipkin B3, one header per field: X-B3-TraceId, X-B3-SpanId, X-B3-ParentSpanId, X-B3-Sampled. */
        B3MULTI;

        public static Propagation parse(String s) {
            return switch (s.trim().toLowerCase(Locale.ROOT)) {
                case "w3c", "tracecontext" -> W3C;
                case "b3", "b3single" -> B3;
                case "b3multi", "b3-multi" -> B3MULTI;
                default -> throw new IllegalArgumentException("unknown trace propagation format '" + s
                        + "' (expected: w3c, b3, b3multi)");
            };
        }
    }

    public ObservabilityConfig {
        if (!(traceSample >= 0 && traceSample <= 1)) {
            throw new IllegalArgumentException("trace sample " + traceSample + " out of range (expected 0.0 to 1.0)");
        }
        if (traceReservoir < 0) {
            throw new IllegalArgumentException("trace reservoir " + traceReservoir + "/s below zero (expected N/s, N >= 0)");
        }
        if (!traceFormat.equals("zipkin") && !traceFormat.equals("otlp")) {
            throw new IllegalArgumentException("unknown trace format '" + traceFormat + "' (expected: zipkin, otlp)");
        }
        if (!traceEndpoint.equals(AUTO) && !traceEndpoint.equals(OFF)) {
            URI u;
            try {
                u = URI.create(traceEndpoint);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid trace endpoint '" + traceEndpoint
                        + "' (expected an http URL such as http://127.0.0.1:9411/api/v2/spans, auto or off)");
            }
            if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
                    || u.getHost() == null) {
                throw new IllegalArgumentException("invalid trace endpoint '" + traceEndpoint
                        + "' (expected an http URL such as http://127.0.0.1:9411/api/v2/spans, auto or off)");
            }
        }
        if (traceFormat.equals("otlp") && traceEndpoint.equals(AUTO) && tracing) {
            throw new IllegalArgumentException("trace format otlp needs a trace endpoint URL, e.g."
                    + " http://127.0.0.1:4318/v1/traces (the control plane collects Zipkin JSON only)");
        }
        propagation = propagation.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(propagation));
        accessLogs = accessLogs.isEmpty() ? Map.of() : Map.copyOf(new EnumMap<>(accessLogs));
        routes = List.copyOf(routes);
    }

    /** With the default reservoir ({@link #DEFAULT_TRACE_RESERVOIR}): a ratio of 1.0 samples every trace anyway. */
    public ObservabilityConfig(boolean metrics, boolean tracing, double traceSample, String traceEndpoint,
                               String traceFormat, Set<Propagation> propagation, Map<Direction, String> accessLogs,
                               List<RouteTable.Route> routes) {
        this(metrics, tracing, traceSample, DEFAULT_TRACE_RESERVOIR, traceEndpoint, traceFormat, propagation,
                accessLogs, routes);
    }

    /**
     * Everything on, spans to the control plane: what the demo needs with nothing else installed. Traces are sampled
     * by a reservoir of 200 a second and 1 % beyond it, so the demo's and a user's first requests are all traced and
     * a saturated sidecar exports a few percent of them.
     */
    public static ObservabilityConfig defaults() {
        // W3C only by default: B3 is still written on every request that arrived with it, and 55 bytes more on
        // every forwarded head were most of what trace headers cost the mesh link.
        return new ObservabilityConfig(true, true, DEFAULT_TRACE_SAMPLE, DEFAULT_TRACE_RESERVOIR, AUTO, "zipkin",
                EnumSet.of(Propagation.W3C), Map.of(), List.of());
    }

    /** Nothing observed beyond the basic per-direction counters: the baseline for overhead measurements. */
    public static ObservabilityConfig off() {
        return new ObservabilityConfig(false, false, 0, 0, OFF, "zipkin", Set.of(), Map.of(), List.of());
    }

    /**
     * The URL spans are posted to, or null for none. {@code auto} follows a {@code weft://HOST:PORT} registry to
     * its control plane's Zipkin-compatible collector ({@code https} for {@code weft+tls://}); any other registry has
     * no default collector.
     */
    public URI resolveTraceEndpoint(String registryUrl) {
        if (!tracing || traceEndpoint.equals(OFF)) {
            return null;
        }
        if (!traceEndpoint.equals(AUTO)) {
            return URI.create(traceEndpoint);
        }
        if (ControlPlaneUrl.isControlPlane(registryUrl)) {
            return ControlPlaneUrl.parse(registryUrl).resolve("/api/v2/spans");
        }
        return null;
    }

    public ObservabilityConfig withAccessLog(Direction direction, String sink) {
        Map<Direction, String> m = new EnumMap<>(Direction.class);
        m.putAll(accessLogs);
        m.put(direction, sink);
        return new ObservabilityConfig(metrics, tracing, traceSample, traceReservoir, traceEndpoint, traceFormat,
                propagation, m, routes);
    }
}
