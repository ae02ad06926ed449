package dev.weft.control.cli;

import dev.weft.registry.support.Durations;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ./weft trace}: lists recent slow or failed traces; {@code ./weft trace ID} prints one as a waterfall.
 * Reads Zipkin's v2 API, so it works against the control plane's span store and against a Zipkin server alike.
 */
@Command(name = "trace", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Lists recent slow or failed traces, or prints one trace as a waterfall.",
                "Reads the control plane's span store (or any Zipkin server: --collector http://HOST:9411)."})
public final class TraceCommand implements Callable<Integer> {

    @Parameters(arity = "0..1", paramLabel = "TRACE_ID", description = "Print this trace as a waterfall.")
    String traceId;

    /** The control plane, and the operator token that reading its traces may need. */
    @picocli.CommandLine.Mixin
    dev.weft.registry.cli.ControlPlaneOptions control;

    @Option(names = "--collector", paramLabel = "URL",
            description = "A Zipkin server (http://HOST:9411) to read instead of the control plane (default: --registry);"
                    + " the operator token is never sent to it.")
    String collector;

    @Option(names = "--lookback", paramLabel = "DURATION", defaultValue = "15m", converter = DurationConverter.class,
            description = "How far back to look for traces (default: ${DEFAULT-VALUE}).")
    Duration lookback;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "Traces to list (default: ${DEFAULT-VALUE}).")
    int limit;

    @Option(names = "--service", paramLabel = "NAME", description = "Only traces with a span of this service.")
    String service;

    @Option(names = "--min-duration", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Only traces with a span at least this long, e.g. 100ms.")
    Duration minDuration;

    @Option(names = "--errors", description = "Only failed traces.")
    boolean errorsOnly;

    @Option(names = "--recent", description = "List the newest traces instead of failed first, then slowest.")
    boolean recent;

    @Option(names = "--scan", paramLabel = "N", defaultValue = "1000",
            description = "Recent traces fetched to pick the slowest and failed from (default: ${DEFAULT-VALUE}).")
    int scan;

    @Option(names = "--width", paramLabel = "COLUMNS", defaultValue = "60", description = "Width of the waterfall's bars (default: ${DEFAULT-VALUE}).")
    int width;

    @Spec
    CommandSpec spec;

    /** The operator token's header when reading the control plane; null for a Zipkin server. */
    private String authorization;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String base = Http.base(spec, collector != null ? collector : control.url());
        authorization = Http.authorizationFor(collector, control);
        if (limit < 1 || scan < 1 || width < 10) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--limit and --scan must be >= 1 and --width >= 10");
        }
        try (Http http = new Http().trust(control.url())) {
            if (traceId != null) {
                String id = traceId.trim().toLowerCase(java.util.Locale.ROOT);
                if (!id.matches("[0-9a-f]{16}|[0-9a-f]{32}")) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "invalid trace id '" + traceId
                            + "' (expected 16 or 32 hex digits, as listed by ./weft trace)");
                }
                List<TraceSpan> spans = TraceSpan.parseTrace(http.get(URI.create(base + "/api/v2/trace/" + id),
                        authorization));
                out.print(Waterfall.render(spans, width));
            } else {
                out.print(list(http, base));
            }
            out.flush();
            return 0;
        } catch (Http.HttpStatusException e) {
            err.println("weft trace: " + (e.status == 404 && traceId != null ? "trace " + traceId
                    + " not found at " + base + " (evicted, not sampled, or never sent there)" : e.getMessage()));
            return 1;
        } catch (IOException e) {
            err.println("weft trace: " + e.getMessage());
            return 1;
        }
    }

    /**
     * Collectors answer newest first, so under load the newest {@code --scan} traces cover only the last moments.
     * To find the slow and failed ones of the whole lookback, two more queries ask for them directly: failed traces
     * ({@code annotationQuery=error}) and traces with a span beyond the 90th percentile of the recent ones
     * ({@code minDuration}).
     */
    private String list(Http http, String base) throws IOException {
        Map<String, Waterfall.Summary> found = new LinkedHashMap<>();
        List<Waterfall.Summary> recentOnes = query(http, base, errorsOnly, minDurationMicros());
        recentOnes.forEach(s -> found.putIfAbsent(s.traceId(), s));
        if (!recent && !errorsOnly) {
            query(http, base, true, minDurationMicros()).forEach(s -> found.putIfAbsent(s.traceId(), s));
            long[] durations = recentOnes.stream().mapToLong(Waterfall.Summary::duration).sorted().toArray();
            if (durations.length > 0) {
                long p90 = durations[(int) Math.min(durations.length - 1, Math.ceil(durations.length * 0.9) - 1)];
                query(http, base, false, Math.max(p90, minDurationMicros()))
                        .forEach(s -> found.putIfAbsent(s.traceId(), s));
            }
        }
        List<Waterfall.Summary> summaries = new ArrayList<>(found.values());
        Comparator<Waterfall.Summary> order = recent
                ? Comparator.comparingLong(Waterfall.Summary::start).reversed()
                : Comparator.comparing((Waterfall.Summary s) -> !s.failed())
                        .thenComparing(Comparator.comparingLong(Waterfall.Summary::duration).reversed());
        summaries.sort(order);
        List<Waterfall.Summary> shown = summaries.subList(0, Math.min(limit, summaries.size()));
        return Waterfall.renderList(shown, summaries.size(), Durations.format(lookback), !recent);
    }

    private long minDurationMicros() {
        return minDuration == null ? 0 : minDuration.toNanos() / 1000;
    }

    private List<Waterfall.Summary> query(Http http, String base, boolean failedOnly, long minMicros)
            throws IOException {
        StringBuilder q = new StringBuilder(base).append("/api/v2/traces?limit=").append(scan)
                .append("&lookback=").append(lookback.toMillis())
                .append("&endTs=").append(System.currentTimeMillis());
        if (service != null) {
            q.append("&serviceName=").append(URLEncoder.encode(service, StandardCharsets.UTF_8));
        }
        if (minMicros > 0) {
            q.append("&minDuration=").append(minMicros);
        }
        if (failedOnly) {
            q.append("&annotationQuery=error");
        }
        List<Waterfall.Summary> summaries = new ArrayList<>();
        for (List<TraceSpan> t : TraceSpan.parseTraces(http.get(URI.create(q.toString()), authorization))) {
            if (!t.isEmpty()) {
                summaries.add(Waterfall.summarize(t));
            }
        }
        return summaries;
    }
}
