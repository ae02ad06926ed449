package dev.weft.control.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code ./weft stat}: per service and per edge (caller → callee), the request rate, success rate, p50/p99 and
 * requests in flight, plus each service's mesh tax, from live sidecar metrics (two scrapes {@code --interval}
 * apart) or from the spans the control plane collected.
 */
@Command(name = "stat", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Shows per service and per edge (caller → callee): rate, success rate, p50/p99, in flight.",
                "From every sidecar's /metrics (found through the control plane), or from collected spans."})
public final class StatCommand implements Callable<Integer> {

    @Mixin
    SidecarTargets sidecars;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "2s", converter = DurationConverter.class,
            description = "Time between the two scrapes that rates and percentiles are computed over (default: ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(names = "--source", paramLabel = "SOURCE", defaultValue = "metrics",
            description = "metrics (live sidecar /metrics) or spans (collected spans of the last --window) (default: ${DEFAULT-VALUE}).")
    String source;

    @Option(names = "--window", paramLabel = "DURATION", defaultValue = "1m", converter = DurationConverter.class,
            description = "With --source spans: how far back (default: ${DEFAULT-VALUE}).")
    Duration window;

    @Option(names = "--collector", paramLabel = "URL",
            description = "With --source spans: control plane or Zipkin server holding the spans (default: --registry).")
    String collector;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!source.equals("metrics") && !source.equals("spans")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --source '" + source
                    + "' (expected metrics or spans)");
        }
        if (interval.isZero() || interval.isNegative() || window.isZero() || window.isNegative()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--interval and --window must be positive");
        }
        try (MeshView view = new MeshView()) {
            MeshStats.Report report = source.equals("spans")
                    ? fromSpans(view, collector != null ? collector : sidecars.control.url(),
                            Http.authorizationFor(collector, sidecars.control), window)
                    : fromMetrics(view, sidecars, interval);
            out.print(MeshStats.render(report));
            out.flush();
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("weft stat: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("weft stat: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        }
    }

    static MeshStats.Report fromMetrics(MeshView view, SidecarTargets sidecars, Duration interval)
            throws IOException, InterruptedException {
        List<String> notes = new ArrayList<>();
        List<MeshView.Target> targets = sidecars.find(view, notes);
        long t0 = System.nanoTime();
        List<MeshStats.Scrape> before = view.scrape(targets, new ArrayList<>());
        Thread.sleep(interval.toMillis());
        List<MeshStats.Scrape> after = view.scrape(targets, notes);
        double seconds = (System.nanoTime() - t0) / 1e9;
        return MeshStats.fromScrapes(before, after, seconds, notes);
    }

    static MeshStats.Report fromSpans(MeshView view, String collector, String authorization, Duration window)
            throws IOException {
        List<String> notes = new ArrayList<>();
        List<List<TraceSpan>> traces = view.traces(collector, authorization, window, 10_000);
        if (traces.size() >= 10_000) {
            notes.add("10000 traces read: the rates undercount; use a shorter --window");
        }
        notes.add("in-flight is not known from finished spans; rates count sampled requests only (a failure's span"
                + " exported alone is left out)");
        return MeshStats.fromTraces(traces, window.toMillis() / 1000.0, notes);
    }
}
