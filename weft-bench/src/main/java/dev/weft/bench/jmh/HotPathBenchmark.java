package dev.weft.bench.jmh;

import dev.weft.bench.FreePorts;
import dev.weft.bench.ChildProcess;
import dev.weft.bench.Experiment;
import dev.weft.bench.MeshTokens;
import dev.weft.dataplane.SidecarCommand;
import dev.weft.examples.HostPort;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import picocli.CommandLine;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * One request through the real sidecars, everything in this JVM so that {@code -prof gc} sees every thread's
 * allocations: a client on one keep-alive connection, the consumer-side sidecar, the provider-side sidecar (WMP
 * between them), and a backend that answers at once ({@link RawHttpBackend}: the example provider's answer, without
 * delay, from a backend that allocates nothing per field it reads, so that the fields the mesh adds cost nothing here).
 *
 * <p>{@code direct} sends the same request straight to the backend. The sidecars' share is {@code mesh - direct}
 * (client and backend cancel out), and since a request crosses two sidecars, the per-hop figures the bench reports
 * are half of that. ns/op is the round trip of one request at a time (latency, not throughput).
 *
 * <p>The sidecars are started through their command line ({@code weft sidecar ...}) on a thread each, exactly as
 * {@code ./weft sidecar} runs them, and drain when the JVM exits. The control plane, which receives their spans,
 * runs in a process of its own, as it does in a mesh: in this JVM its span store and JSON reading would count in
 * {@code -prof gc} as if the sidecars allocated it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Dio.netty.noUnsafe=false", "-XX:+UseSerialGC", "-Xmx256m"})
public class HotPathBenchmark {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    /**
     * "on": the sidecars as users run them (tracing by the default sampler, and metrics); "off": both off, the bare
     * proxy; "all" (not run by default, {@code -p observability=all}): every trace sampled, the default until session 10.
     */
    @Param({"on", "off"})
    public String observability;

    private final FreePorts ports = new FreePorts();
    private final List<Thread> sidecars = new ArrayList<>();
    private static final Pattern CONTROL_LISTENING = Pattern.compile("weft control listening on (\\S+)");
    private ChildProcess control;
    private RawHttpBackend backend;
    private RawHttpClient direct;
    private RawHttpClient mesh;

    @Setup(Level.Trial)
    public void start() throws Exception {
        try {
            startAll();
        } catch (Exception | Error e) {
            // JMH runs no @TearDown after a failed @Setup: without this the control plane outlived the fork.
            stop();
            throw e;
        }
    }

    private void startAll() throws Exception {
        backend = new RawHttpBackend();
        String app = HostPort.of(backend.address()).toString();
        Path data = Files.createTempDirectory("weft-jmh-control");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        control = ChildProcess.start("control plane", List.of(java, "--enable-native-access=ALL-UNNAMED",
                        "--sun-misc-unsafe-memory-access=allow", "-XX:+UseSerialGC", "-Xmx256m",
                        "-cp", System.getProperty("java.class.path"), Experiment.WEFT_CLI_MAIN,
                        "control", "--listen", "127.0.0.1:0", "--data-dir", data.resolve("state").toString()),
                data.resolve("control.log"), List.of());
        String registryUrl = "weft://" + control.awaitOutput(CONTROL_LISTENING, "weft control listening on",
                READY_TIMEOUT).group(1);

        // Registering is a write the control plane takes only with credentials (issue 13): a join token each.
        Path state = data.resolve("state");
        int providerAdmin = ports.pick();
        startSidecar(providerAdmin, MeshTokens.create(registryUrl, state, "provider", data.resolve("provider.token")),
                "--service", "provider", "--app", app, "--registry", registryUrl,
                "--capacity", "0", "--id", "provider-backend", "--inbound", "127.0.0.1:" + ports.pick());
        int upstream = ports.pick();
        int consumerAdmin = ports.pick();
        startSidecar(consumerAdmin, MeshTokens.create(registryUrl, state, "consumer", data.resolve("consumer.token")),
                "--service", "consumer", "--app", app, "--registry", registryUrl,
                "--upstream", "provider=127.0.0.1:" + upstream, "--inbound", "127.0.0.1:" + ports.pick());

        direct = new RawHttpClient(backend.address().getPort());
        mesh = new RawHttpClient(upstream);
        // The consumer side learns of the provider from the registry: wait for the first answer through the mesh.
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (true) {
            try {
                mesh.call();
                break;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no answer through the mesh within " + READY_TIMEOUT, notYet);
                }
                mesh.close();
                mesh = new RawHttpClient(upstream);
                Thread.sleep(50);
            }
        }
    }

    private void startSidecar(int admin, Path token, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--admin", "127.0.0.1:" + admin, "--token-file", token.toString()));
        // The plaintext hot path: with --mtls off the token only proves the registration, no certificate is asked
        // for, and the two sidecars speak WMP without TLS (the bench's weft-mtls plane prices TLS).
        all.addAll(List.of("--mtls", "off"));
        if (observability.equals("off")) {
            all.addAll(List.of("--tracing", "off", "--metrics", "off"));
        } else if (observability.equals("all")) {
            all.addAll(List.of("--trace-sample", "1")); // the default until session 10: every trace exported
        }
        Thread t = Thread.ofPlatform().daemon().name("sidecar-" + args[1]).start(() ->
                new CommandLine(new SidecarCommand()).execute(all.toArray(String[]::new)));
        sidecars.add(t);
        awaitReady(URI.create("http://127.0.0.1:" + admin + "/ready"));
    }

    private static void awaitReady(URI ready) throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        try (HttpClient client = HttpClient.newHttpClient()) {
            while (true) {
                try {
                    if (client.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        return;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(ready + " did not answer 200 within " + READY_TIMEOUT);
                }
                Thread.sleep(20);
            }
        }
    }

    @TearDown(Level.Trial)
    public void stop() throws IOException, InterruptedException {
        // Null-safe: also called by a start() that failed part-way.
        if (direct != null) {
            direct.close();
        }
        if (mesh != null) {
            mesh.close();
        }
        if (backend != null) {
            backend.close();
        }
        if (control != null) {
            control.stop(Duration.ofSeconds(5));
        }
        // The sidecars drain from their shutdown hooks when this JVM exits.
    }

    @Benchmark
    public int direct() throws IOException {
        calls++;
        return direct.call();
    }

    @Benchmark
    public int mesh() throws IOException {
        calls++;
        return mesh.call();
    }

    // Who allocates, measured on the threads themselves: (mesh - direct) would also count what the backend allocates
    // to parse the fields the mesh adds to each request (via, x-forwarded-for, traceparent), which is the app's cost,
    // not a sidecar's; RawHttpBackend makes that nothing, and these lines show it.
    private long calls;
    private long sidecarBytesAtStart;
    private long backendBytesAtStart;

    @Setup(Level.Iteration)
    public void markIteration() {
        calls = 0;
        sidecarBytesAtStart = allocatedBytes("weft-");
        backendBytesAtStart = allocatedBytes("provider-backend");
    }

    /**
     * Prints what the sidecars' threads ("weft-*", both sidecars together) and the backend's threads allocated per
     * request in the iteration.
     */
    @TearDown(Level.Iteration)
    public void reportThreads() {
        if (calls > 0) {
            System.out.printf("per request: sidecar threads %.1f B, backend threads %.1f B (%d requests)%n",
                    (allocatedBytes("weft-") - sidecarBytesAtStart) / (double) calls,
                    (allocatedBytes("provider-backend") - backendBytesAtStart) / (double) calls, calls);
        }
    }

    private static long allocatedBytes(String threadNamePrefix) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (java.lang.management.ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds(), 0)) {
            if (t != null && t.getThreadName().startsWith(threadNamePrefix)) {
                sum += Math.max(0, mx.getThreadAllocatedBytes(t.getThreadId()));
            }
        }
        return sum;
    }
}
