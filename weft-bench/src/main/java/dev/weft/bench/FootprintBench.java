package dev.weft.bench;

import dev.weft.dataplane.SidecarJvm;
import dev.weft.registry.support.Durations;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A sidecar's own footprint, as issue 15 states its targets: how fast one is ready, and whether its memory stays
 * flat as the mesh grows. Real processes: a control plane, an example app, and sidecars started the way
 * {@code ./weft sidecar} starts them (the sidecar's JVM options and the AOT cache ./weft trained).
 *
 * <ul>
 *   <li><b>Ready:</b> {@code starts} sidecars one after the other, each from process start to {@code /ready} 200
 *       (polled every 5 ms), and the CPU the process used until then (/proc), with the control plane and the app
 *       already up. With several variants (JVM options added, e.g. a JIT lever), their starts alternate, so a
 *       lever and the baseline are compared under the same load.</li>
 *   <li><b>Mesh size:</b> a sidecar that calls 3 services (10 endpoints each), its resident memory once ready and
 *       settled, first in a mesh of just those 3 services, then, in a fresh sidecar, after {@code services} − 3
 *       more services of 10 endpoints each were registered. The control plane's watcher count shows what the
 *       sidecar subscribed to.</li>
 * </ul>
 *
 * <p>Thread: the command's; blocking.
 */
final class FootprintBench {
    static final int ENDPOINTS_PER_SERVICE = 10;
    static final int CALLED = 3;
    private static final Duration SETTLE = Duration.ofSeconds(5);
    private static final Pattern LISTENING = Pattern.compile("listening on [^:\\s]+:(\\d+)");

    /**
     * @param variants JVM options appended to the sidecar's own and its AOT cache, one list per variant (an empty
     *                 list: the sidecar as shipped); with several, the starts alternate between them (A, B, A, B...),
     *                 {@code starts} each, so that every variant meets the same load on a shared machine
     * @param mtls     the sidecars' {@code --mtls}: off, as the bench's other sidecars run, or strict, the default
     */
    record Settings(int starts, int services, Duration startTimeout, Path runDir, Consumer<String> say,
                    List<List<String>> variants, String mtls) {
        Settings {
            if (variants.isEmpty()) {
                throw new IllegalArgumentException("at least one variant (an empty one: the sidecar as shipped)");
            }
            variants = variants.stream().map(List::copyOf).toList();
        }

        /** How a variant is named in the report: its options, or "as shipped" for none. */
        String label(int variant) {
            List<String> add = variants.get(variant);
            return add.isEmpty() ? "as shipped" : String.join(" ", add);
        }
    }

    /** One sidecar start of a variant: wall time, process CPU and the JIT compiler threads' part of it, until ready. */
    record Start(int variant, Duration ready, Duration cpu, Duration jitCpu) {}

    /** The memory of a sidecar that calls {@link #CALLED} services, in a mesh of {@code services}. */
    record Size(int services, int endpoints, long rssBytes, long peakRssBytes, int watchers) {}

    record Result(List<Start> starts, List<Size> sizes) {
        /** The figure's values over one variant's starts, sorted. */
        List<Duration> sorted(int variant, Function<Start, Duration> figure) {
            return starts.stream().filter(st -> st.variant() == variant).map(figure).sorted().toList();
        }

        /** The upper median (the 6th of 10), as the bench has always reported it. */
        Duration median(int variant, Function<Start, Duration> figure) {
            List<Duration> values = sorted(variant, figure);
            return values.get(values.size() / 2);
        }
    }

    private final Settings settings;
    private final List<ChildProcess> started = new ArrayList<>();
    private final HttpProbe http = new HttpProbe();
    private final FreePorts ports = new FreePorts();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private String registry;
    private URI controlBase;
    private int appPort;
    private int next;

    private FootprintBench(Settings settings) {
        this.settings = settings;
    }

    static Result run(Settings settings) throws ExperimentException, InterruptedException, IOException {
        FootprintBench b = new FootprintBench(settings);
        try {
            return b.measure();
        } finally {
            b.stopAll();
        }
    }

    private Result measure() throws ExperimentException, InterruptedException, IOException {
        ChildProcess control = launch("control", List.of("-Xmx256m"), List.of("control", "--listen",
                "127.0.0.1:0", "--data-dir", settings.runDir().resolve("control-data").toString()));
        int controlPort = Integer.parseInt(awaitListening(control, "weft control listening on HOST:PORT"));
        registry = "weft://127.0.0.1:" + controlPort;
        controlBase = URI.create("http://127.0.0.1:" + controlPort);
        ChildProcess app = launch("app", List.of("-Xmx128m"), List.of("provider", "--listen", "127.0.0.1:0",
                "--name", "app", "--delay-ms", "0"));
        appPort = Integer.parseInt(awaitListening(app, "provider app listening on HOST:PORT"));
        String lease = lease();
        for (int s = 0; s < CALLED; s++) {
            registerService(lease, s);
        }

        List<Start> starts = new ArrayList<>();
        for (int i = 0; i < settings.starts(); i++) {
            for (int v = 0; v < settings.variants().size(); v++) {
                starts.add(startAndStop(v));
            }
        }
        List<Size> sizes = new ArrayList<>();
        sizes.add(size(CALLED));
        settings.say().accept("registering " + (settings.services() - CALLED) + " more services of "
                + ENDPOINTS_PER_SERVICE + " endpoints");
        for (int s = CALLED; s < settings.services(); s++) {
            registerService(lease, s);
        }
        sizes.add(size(settings.services()));
        return new Result(starts, sizes);
    }

    private Start startAndStop(int variant) throws ExperimentException, InterruptedException {
        int admin = ports.pick();
        ChildProcess sidecar = sidecar(admin, variant);
        Duration ready = sidecar.awaitReady(http, URI.create("http://127.0.0.1:" + admin + "/ready"),
                settings.startTimeout());
        Duration cpu = Duration.ofNanos(ProcStats.treeCpuNanos(sidecar.pid()));
        Duration jit = Duration.ofNanos(ProcStats.treeJitCpuNanos(sidecar.pid()));
        settings.say().accept(String.format(Locale.ROOT, "start %d (%s): ready in %d ms, %d ms of CPU (JIT %d ms)",
                next, settings.label(variant), ready.toMillis(), cpu.toMillis(), jit.toMillis()));
        sidecar.stop(Duration.ofSeconds(10));
        started.remove(sidecar);
        return new Start(variant, ready, cpu, jit);
    }

    private Size size(int services) throws ExperimentException, InterruptedException, IOException {
        int admin = ports.pick();
        int watchersBefore = watchers();
        ChildProcess sidecar = sidecar(admin, 0);
        sidecar.awaitReady(http, URI.create("http://127.0.0.1:" + admin + "/ready"), settings.startTimeout());
        Thread.sleep(SETTLE.toMillis());
        long rss = ProcStats.rssBytes(sidecar.pid()).orElse(0);
        long peak = ProcStats.peakRssBytes(sidecar.pid()).orElse(0);
        int watchers = watchers() - watchersBefore;
        settings.say().accept(String.format(Locale.ROOT, "mesh of %d services: RSS %.1f MiB (peak %.1f), %d watches",
                services, rss / 1048576.0, peak / 1048576.0, watchers));
        sidecar.stop(Duration.ofSeconds(10));
        started.remove(sidecar);
        return new Size(services, services * ENDPOINTS_PER_SERVICE, rss, peak, watchers);
    }

    /** A sidecar calling svc-0..2 through --upstream listeners, as ./weft sidecar runs it, plus a variant's options. */
    private ChildProcess sidecar(int admin, int variant) throws ExperimentException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("sidecar", "--service", "footprint", "--id", "footprint-" + next,
                "--app", "127.0.0.1:" + appPort, "--registry", registry, "--admin", "127.0.0.1:" + admin,
                "--inbound", "127.0.0.1:0"));
        for (int s = 0; s < CALLED; s++) {
            args.addAll(List.of("--upstream", "svc-" + s + "=127.0.0.1:0"));
        }
        // Registering needs a sidecar's credential (docs/security.md): a join token, made before the process
        // starts so that it is not part of the start measured; with --mtls strict the start includes getting a
        // certificate for it.
        Path token = MeshTokens.create(registry, settings.runDir().resolve("control-data"), "footprint",
                settings.runDir().resolve("footprint-" + next + ".token"));
        args.addAll(List.of("--mtls", settings.mtls(), "--token-file", token.toString()));
        List<String> jvm = new ArrayList<>(SidecarJvm.options());
        SidecarJvm.aotCache(jvm).ifPresent(cache -> jvm.add("-XX:AOTCache=" + cache));
        jvm.addAll(settings.variants().get(variant));
        return launch("sidecar-" + next++, jvm, args);
    }

    private ChildProcess launch(String name, List<String> jvm, List<String> args) throws ExperimentException {
        ChildProcess p = ChildProcess.start(name, ChildJvm.command(jvm, Experiment.WEFT_CLI_MAIN, args),
                settings.runDir().resolve(name + ".log"), List.of());
        started.add(p);
        return p;
    }

    private static String awaitListening(ChildProcess p, String expected) throws ExperimentException,
            InterruptedException {
        Matcher m = p.awaitOutput(LISTENING, expected, Duration.ofSeconds(60));
        return m.group(1);
    }

    private String lease() throws IOException, InterruptedException {
        String body = call("PUT", "/v1/leases", "{\"ttlMillis\": 600000}");
        Matcher m = Pattern.compile("\"leaseId\"\\s*:\\s*\"([^\"]+)\"").matcher(body);
        if (!m.find()) {
            throw new IOException("no lease id in " + body);
        }
        return m.group(1);
    }

    /** Service svc-N with endpoints on ports nobody listens on: the sidecar only ever learns about them. */
    private void registerService(String lease, int s) throws IOException, InterruptedException {
        for (int e = 0; e < ENDPOINTS_PER_SERVICE; e++) {
            call("PUT", "/v1/services/svc-" + s + "/endpoints/e" + e, "{\"host\": \"127.0.0.1\", \"port\": "
                    + (20_000 + e) + ", \"weight\": 1, \"capacity\": 100, \"leaseId\": \"" + lease + "\"}");
        }
    }

    private int watchers() throws IOException, InterruptedException {
        Matcher m = Pattern.compile("\"watchers\"\\s*:\\s*(\\d+)").matcher(call("GET", "/v1/health", null));
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    private String call(String method, String path, String json) throws IOException, InterruptedException {
        // The bench's own registrations are the operator's: the control plane wants its token for writes.
        HttpRequest.Builder b = HttpRequest.newBuilder(controlBase.resolve(path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + Files.readString(settings.runDir().resolve("control-data")
                        .resolve("admin.token")).strip());
        b = json == null ? b.GET() : b.method(method, HttpRequest.BodyPublishers.ofString(json))
                .header("content-type", "application/json");
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IOException(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    private void stopAll() throws InterruptedException {
        for (int i = started.size() - 1; i >= 0; i--) {
            started.get(i).stop(Duration.ofSeconds(10));
        }
        http.close();
        client.close();
    }

    /** footprint.md: the method and the figures. */
    static String report(Result r, Settings s, String when) {
        int variants = s.variants().size();
        StringBuilder out = new StringBuilder("# Sidecar footprint\n\n");
        out.append("Run ").append(when).append(" on ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs (load average ").append(String.format(Locale.ROOT, "%.2f", ProcStats.loadAverage()))
                .append(" at the end). Sidecars run with `--mtls ").append(s.mtls())
                .append("`, their JVM as `./weft sidecar` runs it: ")
                .append(String.join(" ", SidecarJvm.options())).append(", with the AOT cache when ./weft trained one")
                .append(variants == 1 && s.variants().getFirst().isEmpty() ? ""
                        : variants == 1 ? ", then `" + s.label(0) + "` (--sidecar-jvm-add)"
                        : ", then each variant's options (--sidecar-jvm-add)")
                .append(".\n\n");
        out.append("## Ready\n\n").append(s.starts()).append(" starts")
                .append(variants == 1 ? "" : " of each of " + variants + " variants, alternating (A, B, A, B...)")
                .append(", one after the other, with the control plane and the app up; from process start to")
                .append(" `/ready` 200 (polled every 5 ms), and the process's CPU until then, all threads, and of it")
                .append(" the JIT compiler threads'.\n\n")
                .append(variants == 1 ? "| start | ready ms | CPU ms | of it JIT ms |\n|---:|---:|---:|---:|\n"
                        : "| start | variant | ready ms | CPU ms | of it JIT ms |\n|---:|---|---:|---:|---:|\n");
        for (int i = 0; i < r.starts().size(); i++) {
            Start st = r.starts().get(i);
            out.append("| ").append(i + 1).append(" | ")
                    .append(variants == 1 ? "" : "`" + s.label(st.variant()) + "` | ")
                    .append(st.ready().toMillis()).append(" | ")
                    .append(st.cpu().toMillis()).append(" | ").append(st.jitCpu().toMillis()).append(" |\n");
        }
        if (variants == 1) {
            out.append("| **median** | **").append(r.median(0, Start::ready).toMillis()).append("** | **")
                    .append(r.median(0, Start::cpu).toMillis()).append("** | **")
                    .append(r.median(0, Start::jitCpu).toMillis()).append("** |\n\n");
        } else {
            out.append("\n| variant | n | ready ms, median | range | CPU ms, median | range | of it JIT ms, median |\n")
                    .append("|---|---:|---:|---:|---:|---:|---:|\n");
            for (int v = 0; v < variants; v++) {
                List<Duration> ready = r.sorted(v, Start::ready);
                List<Duration> cpu = r.sorted(v, Start::cpu);
                out.append("| `").append(s.label(v)).append("` | ").append(ready.size()).append(" | ")
                        .append(r.median(v, Start::ready).toMillis()).append(" | ").append(range(ready)).append(" | ")
                        .append(r.median(v, Start::cpu).toMillis()).append(" | ").append(range(cpu)).append(" | ")
                        .append(r.median(v, Start::jitCpu).toMillis()).append(" |\n");
            }
            out.append("\n");
        }
        out.append("## Mesh size\n\nA sidecar").append(variants == 1 ? "" : " (the first variant)").append(" calling ")
                .append(CALLED).append(" services (`--upstream`), ")
                .append(ENDPOINTS_PER_SERVICE).append(" endpoints each, in a mesh of only those, then a fresh one after")
                .append(" more services were registered; resident memory ").append(Durations.format(SETTLE))
                .append(" after ready. Watches: the control plane's watcher count that the sidecar added.\n\n")
                .append("| services in the mesh | endpoints | RSS MiB | peak RSS MiB | watches |\n|---:|---:|---:|---:|---:|\n");
        for (Size z : r.sizes()) {
            out.append(String.format(Locale.ROOT, "| %d | %d | %.1f | %.1f | %d |%n", z.services(), z.endpoints(),
                    z.rssBytes() / 1048576.0, z.peakRssBytes() / 1048576.0, z.watchers()));
        }
        Size small = r.sizes().getFirst();
        Size big = r.sizes().getLast();
        out.append(String.format(Locale.ROOT, "%nDifference: %+.1f MiB RSS (target: within 8 MiB).%n",
                (big.rssBytes() - small.rssBytes()) / 1048576.0));
        return out.toString();
    }

    private static String range(List<Duration> sorted) {
        return sorted.getFirst().toMillis() + "–" + sorted.getLast().toMillis();
    }

    static void write(Path dir, String report) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("footprint.md"), report);
    }
}
