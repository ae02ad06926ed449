package dev.weft.control.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.diagnose.Diagnosis;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code ./weft diagnose}: what is the root cause right now? Asks the control plane ({@code GET /v1/diagnose}), which
 * analyses the traces it holds (docs/observability.md, "Culprit finding"), and prints its verdict and the ranked
 * evidence, or the JSON as is with {@code --json}.
 */
@Command(name = "diagnose", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Names the root cause of a slowdown or of errors, from the traces the control plane holds.",
                "The service (or instance) whose own time grew or that originates errors, over a window against the",
                "baseline before it. Services that only wait on it, or queue for it, are listed as such."})
public final class DiagnoseCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    @Option(names = "--window", paramLabel = "DURATION", defaultValue = "30s", converter = DurationConverter.class,
            description = "The recent time judged (default: ${DEFAULT-VALUE}).")
    Duration window;

    @Option(names = "--baseline", paramLabel = "DURATION", defaultValue = "5m", converter = DurationConverter.class,
            description = "The time before the window it is compared with (default: ${DEFAULT-VALUE}).")
    Duration baseline;

    @Option(names = "--json", description = "Print the control plane's JSON answer as is (for scripts).")
    boolean json;

    /** The control plane ({@code --registry}, or {@code --control} as this command called it first) and its token. */
    @Mixin
    dev.weft.registry.cli.ControlPlaneOptions control;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String base = Http.base(spec, control.url());
        if (window.compareTo(Duration.ofSeconds(1)) < 0 || baseline.isNegative()) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--window must be at least 1s and --baseline at least 0s");
        }
        URI uri = URI.create(base + "/v1/diagnose?window=" + window.toMillis() + "ms&baseline=" + baseline.toMillis()
                + "ms");
        try (Http http = new Http().trust(control.url())) {
            String body = http.get(uri, control.authorization());
            if (json) {
                out.println(body);
            } else {
                out.print(render(parse(body)));
            }
            out.flush();
            return 0;
        } catch (IOException e) {
            err.println("weft diagnose: " + e.getMessage());
            return 1;
        }
    }

    /** The verdict, then the ranked culprits with their evidence, then the symptoms: what the command prints. */
    public static String render(Diagnosis d) {
        StringBuilder sb = new StringBuilder(d.verdict()).append('\n');
        if (!d.culprits().isEmpty()) {
            Table t = new Table("#", "SERVICE", "ENDPOINT", "KIND", "SCORE", "SELF P90 BEFORE", "SELF P90 NOW",
                    "QUEUE P90", "REQUESTS", "OWN ERRORS", "TRACES").left(1, 2, 3, 9, 10);
            int rank = 1;
            for (Diagnosis.Culprit c : d.culprits()) {
                t.add(String.valueOf(rank++), c.service(),
                        c.endpoint() == null ? "(all)" : c.endpoint() + (c.endpointId() == null ? "" : " " + c.endpointId()),
                        c.kind(), String.format(Locale.ROOT, "%.1f", c.score()), ms(c.selfTimeBeforeMs()),
                        ms(c.selfTimeNowMs()), ms(c.queueTimeMs()), String.valueOf(c.requests()),
                        c.errorKinds().isEmpty() ? "-" : String.format(Locale.ROOT, "%.1f%% ", c.errorRate() * 100)
                                + c.errorKinds().toString().replace("{", "").replace("}", ""),
                        String.join(" ", c.traceIds().subList(0, Math.min(2, c.traceIds().size())))
                                + (c.traceIds().size() > 2 ? " …" : ""));
            }
            sb.append('\n').append(t.render());
        }
        for (Diagnosis.BackPressure b : d.backPressure()) {
            sb.append("back-pressure: ").append(b.service()).append(" waits on ").append(b.waitingOn())
                    .append(" (queue p90 ").append(ms(b.queueTimeBeforeMs())).append(" → ")
                    .append(ms(b.queueTimeNowMs())).append(b.shed() > 0 ? ", " + b.shed() + " shed" : "")
                    .append(")\n");
        }
        for (Diagnosis.Overloaded o : d.overloaded()) {
            sb.append("over its limit: ").append(o.service()).append(": ").append(o.reason()).append('\n');
        }
        for (Diagnosis.Violation v : d.violations()) {
            sb.append("over its ").append(v.fromSlo() ? "SLO" : "baseline").append(": ").append(v.service())
                    .append(' ').append(v.what().equals("p99")
                            ? "p99 " + ms(v.now()) + " > " + ms(v.limit())
                            : String.format(Locale.ROOT, "error rate %.1f%% > %.1f%%", v.now() * 100, v.limit() * 100))
                    .append('\n');
        }
        Diagnosis.Window w = d.window();
        sb.append(String.format(Locale.ROOT, "(%d traces in the last %d s, %d in the %d s before)%n",
                w.windowTraces(), (w.toMs() - w.fromMs()) / 1000, w.baselineTraces(),
                (w.fromMs() - w.baselineFromMs()) / 1000));
        return sb.toString();
    }

    /** A {@code /v1/diagnose} answer (fields it does not know are skipped, so a newer control plane can add some). */
    public static Diagnosis parse(String json) throws IOException {
        return JSON.readValue(json, Diagnosis.class);
    }

    private static String ms(double v) {
        return v < 10 ? String.format(Locale.ROOT, "%.1f ms", v) : String.format(Locale.ROOT, "%.0f ms", v);
    }
}
