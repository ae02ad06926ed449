package dev.weft.cli;

import dev.weft.control.ControlPlane;
import dev.weft.examples.HostPort;
import dev.weft.examples.ProviderServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Creates the sidecar's AOT cache (JDK 25, JEP 483/514/515) with one training run; {@code ./weft} runs it after each
 * build. Usage: {@code AotTraining CACHE LOG JVM-OPTION...}.
 *
 * <p>The training is a real {@code weft sidecar} process, started with exactly the JVM options and class path the
 * sidecars later run with (a cache only loads for the same class path), plus {@code -XX:AOTCacheOutput}. Only that
 * process is recorded, so the cache holds what a sidecar loads and nothing else: every class it holds is loaded at
 * each start. This driver runs the rest in its own JVM, unrecorded: a control plane and a provider. The sidecar
 * calls its own service through an {@code --upstream} listener, so one process runs both halves of the data path
 * (HTTP in, the balancer, WMP out, WMP in, HTTP to the app), registers, watches, answers the admin endpoints and
 * drains on SIGTERM; the JVM writes the cache as it exits.
 *
 * <p>Exit code 0 when the cache was written; otherwise 1 with the reason on stderr. A sidecar without a cache
 * works the same, only starts slower.
 */
public final class AotTraining {
    /**
     * Requests through the sidecar: enough for the JIT to profile the hot path (JEP 515 keeps the profiles).
     * {@code -Dweft.aot.requests=N} in the driver's JVM trains with another number, to measure what the request
     * path's part of the cache does to a start (docs/benchmarks.md, "issue 15: start-up").
     */
    private static final int REQUESTS = Integer.getInteger("weft.aot.requests", 4_000);
    private static final int CONNECTIONS = 8;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** Writing the cache forks a second JVM that assembles it; on a busy 2-core machine that takes a while. */
    private static final Duration EXIT_TIMEOUT = Duration.ofMinutes(3);

    private AotTraining() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: AotTraining CACHE LOG [JVM-OPTION...]");
            System.exit(2);
        }
        Path cache = Path.of(args[0]).toAbsolutePath();
        Path log = Path.of(args[1]).toAbsolutePath();
        List<String> jvmOptions = Arrays.asList(args).subList(2, args.length);
        try {
            train(cache, log, jvmOptions);
        } catch (Exception e) {
            System.err.println("weft: AOT training failed: " + e.getMessage() + " (log: " + log + ")");
            System.exit(1);
        }
        System.exit(0);
    }

    static void train(Path cache, Path log, List<String> jvmOptions) throws Exception {
        Files.createDirectories(cache.getParent());
        Files.deleteIfExists(cache);
        Path dataDir = Files.createTempDirectory("weft-aot-control");
        // A CA, so the training sidecar registers with a join token (as every sidecar must) and trains its TLS too.
        dev.weft.control.ca.CertificateAuthority ca = dev.weft.control.ca.CertificateAuthority.open(
                dataDir.resolve("ca"), dev.weft.control.ca.CertificateAuthority.Settings.defaults());
        ControlPlane control = new ControlPlane(ControlPlane.DEFAULT_WATCH_HEARTBEAT, 1_000).authority(ca);
        ProviderServer provider = null;
        Process sidecar = null;
        try {
            InetSocketAddress registry = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir);
            provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "aot-training",
                    10_000, Duration.ZERO, 1));
            int upstream = freePort();
            int admin = freePort();
            Path tokenFile = Files.writeString(dataDir.resolve("aot-training.token"),
                    ca.createToken("aot-training", Duration.ofMinutes(10), false).join().token());
            List<String> command = new ArrayList<>();
            command.add(ProcessHandle.current().info().command()
                    .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            command.addAll(jvmOptions);
            command.add("-XX:AOTCacheOutput=" + cache);
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), WeftCli.class.getName(),
                    "sidecar", "--service", "aot-training", "--id", "aot-training",
                    "--app", "127.0.0.1:" + provider.address().getPort(),
                    "--registry", "weft://127.0.0.1:" + registry.getPort(),
                    "--upstream", "aot-training=127.0.0.1:" + upstream,
                    "--admin", "127.0.0.1:" + admin, "--token-file", tokenFile.toString()));
            Files.writeString(log, "# " + String.join(" ", command) + System.lineSeparator());
            sidecar = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(2)).build();
            awaitReady(http, sidecar, URI.create("http://127.0.0.1:" + admin + "/ready"));
            drive(http, URI.create("http://127.0.0.1:" + upstream + "/"));
            for (String path : List.of("/metrics", "/config", "/live", "/ready")) {
                get(http, URI.create("http://127.0.0.1:" + admin + path));
            }
            sidecar.destroy(); // SIGTERM: the sidecar drains, the JVM exits and writes the cache
            if (!sidecar.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("the training sidecar did not exit within " + EXIT_TIMEOUT.toSeconds() + " s");
            }
            if (!Files.isRegularFile(cache)) {
                throw new IllegalStateException("the training sidecar exited (code " + sidecar.exitValue()
                        + ") without writing " + cache);
            }
        } finally {
            if (sidecar != null && sidecar.isAlive()) {
                sidecar.destroyForcibly();
            }
            if (provider != null) {
                provider.close();
            }
            control.close();
            deleteRecursively(dataDir);
        }
    }

    private static void awaitReady(HttpClient http, Process sidecar, URI ready) throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!sidecar.isAlive()) {
                throw new IllegalStateException("the training sidecar exited with code " + sidecar.exitValue());
            }
            try {
                if (get(http, ready) == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("the training sidecar was not ready within " + READY_TIMEOUT.toSeconds() + " s");
    }

    /** The example provider's protocol: POST data, the answer is its hash. Every answer is checked. */
    private static void drive(HttpClient http, URI target) throws Exception {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> connections = new ArrayList<>();
            for (int c = 0; c < CONNECTIONS; c++) {
                int id = c;
                connections.add(pool.submit(() -> {
                    for (int i = 0; i < REQUESTS / CONNECTIONS; i++) {
                        String data = "aot-" + id + "-" + i;
                        HttpRequest request = HttpRequest.newBuilder(target).timeout(Duration.ofSeconds(10))
                                .POST(HttpRequest.BodyPublishers.ofString(data)).build();
                        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                        if (response.statusCode() != 200) {
                            throw new IllegalStateException("request through the training sidecar answered "
                                    + response.statusCode() + ": " + response.body().strip());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : connections) {
                f.get(2, TimeUnit.MINUTES);
            }
        }
    }

    private static int get(HttpClient http, URI uri) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
