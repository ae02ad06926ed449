package dev.weft.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The paper's experiment on loopback, every component its own OS process:
 *
 * <pre>
 *   LoadGenerator --HTTP--> consumer --HTTP--> consumer's sidecar ==mesh==> provider sidecars --HTTP--> providers
 *   (this process)                                    |                           |              small  (weight 1)
 *                                                     +------ registry ---------+              medium (weight 2)
 *                                                        (weft control or --registry)           large  (weight 3)
 * </pre>
 *
 * {@link #startTopology} shows the whole topology in start order. Each step waits until its process is ready, so a
 * failure names the process that did not come up. Everything started is stopped at the end, on failure, and from a
 * shutdown hook on Ctrl-C.
 */
public final class Experiment {
    /** The command line every child runs; {@link Settings#mainClass()} replaces it in tests. */
    public static final String WEFT_CLI_MAIN = "dev.weft.cli.WeftCli";

    /** Flags every Weft JVM needs on JDK 25 (Netty's Unsafe and native access), plus a lean collector. */
    static final List<String> CHILD_JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED",
            "--sun-misc-unsafe-memory-access=allow", "-Dio.netty.noUnsafe=false", "-XX:+UseSerialGC");

    /** The paper's providers: their resources are small:medium:large = 1:2:3, which the mesh sees as weights. */
    public static final List<ProviderSpec> PROVIDERS = List.of(
            new ProviderSpec("small", 1), new ProviderSpec("medium", 2), new ProviderSpec("large", 3));

    static final String LOOPBACK = "127.0.0.1";
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    private static final Pattern CONTROL_READY = Pattern.compile("weft control listening on (\\S+:\\d+)");
    private static final Pattern CONSUMER_READY = Pattern.compile("consumer listening on \\S+:(\\d+)");

    public record ProviderSpec(String name, int weight) {}

    /**
     * @param connections            load generator connections (the paper: 128, 256, 512)
     * @param duration               measured time
     * @param warmup                 unrecorded load first
     * @param loadTimeout            a request without an answer after this long is a timeout
     * @param loadThreads            the load generator's event loops
     * @param registry               an external registry URL for the sidecars (e.g. etcd); null starts
     *                               {@code weft control} instead
     * @param keepLogs               keep the run directory after a clean run (it is always kept after a failure)
     * @param runDir                 where the logs go; null for a new temporary directory
     * @param startTimeout           how long each process may take to become ready
     * @param providerDelay          each provider's simulated work (the paper: 50 ms)
     * @param providerMaxConcurrency each provider's limit, also announced by its sidecar as capacity (the paper: 200)
     * @param childHeap              {@code -Xmx} of each child JVM, e.g. {@code 256m}
     * @param mainClass              the children's main class, with subcommands control, sidecar, provider, consumer
     * @param out                    where progress and the start-up steps are printed; null for silence
     */
    public record Settings(int connections, Duration duration, Duration warmup, Duration loadTimeout, int loadThreads,
                           String registry, boolean keepLogs, Path runDir, Duration startTimeout,
                           Duration providerDelay, int providerMaxConcurrency, String childHeap, String mainClass,
                           PrintStream out) {
        public Settings {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(warmup, "warmup");
            Objects.requireNonNull(loadTimeout, "loadTimeout");
            Objects.requireNonNull(startTimeout, "startTimeout");
            Objects.requireNonNull(providerDelay, "providerDelay");
            Objects.requireNonNull(childHeap, "childHeap");
            Objects.requireNonNull(mainClass, "mainClass");
            // Checked here, not when the load starts: a typo should fail before eight JVMs are started.
            if (connections < 1) {
                throw new IllegalArgumentException("connections must be at least 1 (got " + connections + ")");
            }
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("duration must be positive (got " + duration + ")");
            }
            if (warmup.isNegative()) {
                throw new IllegalArgumentException("warm-up must be zero or more (got " + warmup + ")");
            }
            if (loadTimeout.isNegative() || loadTimeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive (got " + loadTimeout + ")");
            }
            if (loadThreads < 1) {
                throw new IllegalArgumentException("threads must be at least 1 (got " + loadThreads + ")");
            }
            if (providerDelay.isNegative()) {
                throw new IllegalArgumentException("delay must be zero or more (got " + providerDelay + ")");
            }
            if (providerMaxConcurrency < 1) {
                throw new IllegalArgumentException("max-concurrency must be at least 1 (got " + providerMaxConcurrency + ")");
            }
            if (!childHeap.matches("\\d+[kKmMgG]?")) {
                throw new IllegalArgumentException("invalid heap size '" + childHeap + "' (expected e.g. 256m or 1g)");
            }
        }

        /** The paper's setting: 512 connections, 30 s after a 5 s warm-up, providers of 200 x 50 ms. */
        public static Settings defaults() {
            return new Settings(512, Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(5),
                    Runtime.getRuntime().availableProcessors(), null, false, null, Duration.ofSeconds(20),
                    Duration.ofMillis(50), 200, "256m", WEFT_CLI_MAIN, System.err);
        }

        public Settings withConnections(int n) {
            return new Settings(n, duration, warmup, loadTimeout, loadThreads, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withDuration(Duration d) {
            return new Settings(connections, d, warmup, loadTimeout, loadThreads, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withWarmup(Duration d) {
            return new Settings(connections, duration, d, loadTimeout, loadThreads, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withLoadTimeout(Duration d) {
            return new Settings(connections, duration, warmup, d, loadThreads, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withLoadThreads(int n) {
            return new Settings(connections, duration, warmup, loadTimeout, n, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withRegistry(String url) {
            return new Settings(connections, duration, warmup, loadTimeout, loadThreads, url, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withKeepLogs(boolean keep) {
            return new Settings(connections, duration, warmup, loadTimeout, loadThreads, registry, keep, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withRunDir(Path dir) {
            return new Settings(connections, duration, warmup, loadTimeout, loadThreads, registry, keepLogs, dir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withStartTimeout(Duration d) {
            return new Settings(connections, duration, warmup, loadTimeout, loadThreads, registry, keepLogs, runDir,
                    d, providerDelay, providerMaxConcurrency, childHeap, mainClass, out);
        }

        public Settings withMainClass(String main) {
            return new Settings(connections, duration, warmup, loadTimeout, loadThreads, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, main, out);
        }

        public Settings withOut(PrintStream stream) {
            return new Settings(connections, duration, warmup, loadTimeout, loadThreads, registry, keepLogs, runDir,
                    startTimeout, providerDelay, providerMaxConcurrency, childHeap, mainClass, stream);
        }
    }

    private final Settings settings;
    private final ChildProcesses children = new ChildProcesses();
    private final FreePorts ports = new FreePorts();
    private final HttpProbe http = new HttpProbe();
    private final ObjectMapper json = new ObjectMapper();
    private Path runDir;

    private Experiment(Settings settings) {
        this.settings = settings;
    }

    /**
     * Starts the topology, measures it, stops it and returns what was measured.
     *
     * @throws ExperimentException naming the process that did not come up, with the tail of its log
     */
    public static ExperimentResult run(Settings settings) throws ExperimentException, InterruptedException {
        Experiment experiment = new Experiment(settings);
        try {
            return experiment.execute();
        } finally {
            experiment.http.close();
        }
    }

    private ExperimentResult execute() throws ExperimentException, InterruptedException {
        runDir = createRunDir();
        say("run directory: " + runDir + " (one log per process)");
        Thread hook = new Thread(() -> children.stopAll(STOP_GRACE), "weft-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        boolean clean = false;
        try {
            Topology topology = startTopology();
            ExperimentResult result = measure(topology);
            clean = true;
            return result;
        } finally {
            say("stopping every process it started");
            children.stopAll(STOP_GRACE);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is already running and stops the processes itself.
            }
            if (clean && !settings.keepLogs()) {
                deleteRecursively(runDir);
            } else if (!clean) {
                say("logs kept in " + runDir);
            }
        }
    }

    /**
     * The paper's topology, started from the back to the front so that each part finds what it depends on:
     * registry, then each provider with its sidecar, then the consumer with its sidecar. The consumer app starts
     * before its sidecar because the sidecar checks its app.
     */
    private Topology startTopology() throws ExperimentException, InterruptedException {
        String registry = settings.registry() != null ? settings.registry() : "weft://" + startControlPlane();

        List<RunningProvider> providers = new ArrayList<>();
        for (ProviderSpec spec : PROVIDERS) {
            int appPort = startProvider(spec);
            startSidecar("sidecar-provider-" + spec.name(), List.of(
                    "--service", "provider",
                    "--app", LOOPBACK + ":" + appPort,
                    "--registry", registry,
                    "--weight", Integer.toString(spec.weight()),
                    "--capacity", Integer.toString(settings.providerMaxConcurrency()),
                    "--id", "provider-" + spec.name()));
            providers.add(new RunningProvider(spec, appPort));
        }

        int upstreamPort = ports.pick();
        int consumerPort = startConsumer(upstreamPort);
        startSidecar("sidecar-consumer", List.of(
                "--service", "consumer",
                "--app", LOOPBACK + ":" + consumerPort,
                "--upstream", "provider=" + LOOPBACK + ":" + upstreamPort,
                "--registry", registry),
                upstreamPort);
        return new Topology(consumerPort, providers);
    }

    /** @return the control plane's {@code HOST:PORT}, as it printed it */
    private String startControlPlane() throws ExperimentException, InterruptedException {
        Path dataDir = runDir.resolve("control-data");
        ChildProcess control = launch("control plane", "control.log", List.of(),
                "control", "--listen", LOOPBACK + ":0", "--data-dir", dataDir.toString());
        String address = control.awaitOutput(CONTROL_READY, "weft control listening on HOST:PORT",
                settings.startTimeout()).group(1);
        say("control plane ready on " + address + " (pid " + control.pid() + ")");
        return address;
    }

    /** @return the port the provider bound (it is given port 0 and prints the one it got) */
    private int startProvider(ProviderSpec spec) throws ExperimentException, InterruptedException {
        ChildProcess provider = launch("provider " + spec.name(), "provider-" + spec.name() + ".log", List.of(),
                "provider", "--listen", LOOPBACK + ":0", "--name", spec.name(),
                "--max-concurrency", Integer.toString(settings.providerMaxConcurrency()),
                "--delay-ms", Long.toString(settings.providerDelay().toMillis()));
        Pattern ready = Pattern.compile("provider " + Pattern.quote(spec.name()) + " listening on \\S+:(\\d+)");
        int port = Integer.parseInt(provider.awaitOutput(ready,
                "provider " + spec.name() + " listening on HOST:PORT", settings.startTimeout()).group(1));
        say("provider " + spec.name() + " ready on " + LOOPBACK + ":" + port + " (pid " + provider.pid() + ")");
        return port;
    }

    private int startConsumer(int upstreamPort) throws ExperimentException, InterruptedException {
        ChildProcess consumer = launch("consumer", "consumer.log", List.of(),
                "consumer", "--listen", LOOPBACK + ":0", "--provider-url", "http://" + LOOPBACK + ":" + upstreamPort);
        int port = Integer.parseInt(consumer.awaitOutput(CONSUMER_READY, "consumer listening on HOST:PORT",
                settings.startTimeout()).group(1));
        say("consumer ready on " + LOOPBACK + ":" + port + " (pid " + consumer.pid() + ")");
        return port;
    }

    /**
     * Starts a sidecar on fresh inbound and admin ports and waits for its {@code /ready}.
     *
     * @param extraPorts ports in {@code args} the sidecar binds besides inbound and admin (its upstream listeners)
     */
    private void startSidecar(String name, List<String> args, Integer... extraPorts)
            throws ExperimentException, InterruptedException {
        int inbound = ports.pick();
        int admin = ports.pick();
        List<String> command = new ArrayList<>(List.of("sidecar"));
        command.addAll(args);
        command.addAll(List.of("--inbound", LOOPBACK + ":" + inbound, "--admin", LOOPBACK + ":" + admin));
        List<Integer> bound = new ArrayList<>(List.of(inbound, admin));
        bound.addAll(List.of(extraPorts));
        ChildProcess sidecar = launch(name, name + ".log", bound, command.toArray(String[]::new));
        sidecar.awaitReady(http, URI.create("http://" + LOOPBACK + ":" + admin + "/ready"), settings.startTimeout());
        say(name + " ready: inbound " + LOOPBACK + ":" + inbound + ", admin " + LOOPBACK + ":" + admin
                + " (pid " + sidecar.pid() + ")");
    }

    private ChildProcess launch(String name, String logFile, List<Integer> boundPorts, String... args)
            throws ExperimentException {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(CHILD_JVM_FLAGS);
        command.add("-Xmx" + settings.childHeap());
        command.add("-cp");
        command.add(absoluteClassPath());
        command.add(settings.mainClass());
        command.addAll(List.of(args));
        ChildProcess child = ChildProcess.start(name, command, runDir.resolve(logFile), boundPorts);
        children.add(child);
        return child;
    }

    private ExperimentResult measure(Topology topology) throws InterruptedException {
        URI target = URI.create("http://" + LOOPBACK + ":" + topology.consumerPort() + "/");
        say("mesh ready; load: " + settings.connections() + " connections to " + target + " for "
                + DurationConverter.format(settings.duration()) + " after "
                + DurationConverter.format(settings.warmup()) + " warm-up");
        LoadGenerator.Settings load = new LoadGenerator.Settings(target, settings.connections(), settings.duration(),
                settings.warmup(), settings.loadTimeout(), settings.loadThreads(), settings.providerDelay(),
                settings.out());
        Map<String, Long> before = new LinkedHashMap<>();
        Map<String, Long> after = new LinkedHashMap<>();
        LoadResult result = LoadGenerator.run(load, new LoadGenerator.PhaseListener() {
            @Override
            public void measurementStarting() {
                before.putAll(servedByProvider(topology));
            }

            @Override
            public void measurementEnded() {
                after.putAll(servedByProvider(topology));
            }
        });
        return new ExperimentResult(result, shares(topology, before, after), runDir,
                settings.keepLogs());
    }

    /** Each provider's {@code served} counter, -1 where {@code /stats} could not be read. */
    private Map<String, Long> servedByProvider(Topology topology) {
        Map<String, Long> served = new LinkedHashMap<>();
        for (RunningProvider provider : topology.providers()) {
            served.put(provider.spec().name(), served(provider));
        }
        return served;
    }

    /** Retried, with a generous timeout: a provider under full load on a busy machine can be slow to answer. */
    private long served(RunningProvider provider) {
        URI stats = URI.create("http://" + LOOPBACK + ":" + provider.appPort() + "/stats");
        String problem = "no attempt";
        for (int attempt = 1; attempt <= 3; attempt++) {
            try {
                HttpResponse<String> response = http.get(stats, Duration.ofSeconds(5));
                JsonNode servedNode = response.statusCode() == 200 ? json.readTree(response.body()).get("served") : null;
                if (servedNode != null && servedNode.canConvertToLong()) {
                    return servedNode.asLong();
                }
                problem = "answered " + response.statusCode() + " without a numeric 'served'";
            } catch (IOException e) {
                problem = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }
        say("cannot read GET " + stats + " of provider " + provider.spec().name() + ": " + problem
                + "; its share is reported as n/a");
        return -1;
    }

    private static List<ExperimentResult.ProviderShare> shares(Topology topology, Map<String, Long> before,
                                                               Map<String, Long> after) {
        int weights = topology.providers().stream().mapToInt(p -> p.spec().weight()).sum();
        Map<String, Long> delta = new LinkedHashMap<>();
        long total = 0;
        boolean allKnown = true;
        for (RunningProvider provider : topology.providers()) {
            String name = provider.spec().name();
            long b = before.getOrDefault(name, -1L);
            long a = after.getOrDefault(name, -1L);
            long served = b < 0 || a < 0 ? -1 : a - b;
            delta.put(name, served);
            if (served < 0) {
                allKnown = false;
            } else {
                total += served;
            }
        }
        List<ExperimentResult.ProviderShare> shares = new ArrayList<>();
        for (RunningProvider provider : topology.providers()) {
            long served = delta.get(provider.spec().name());
            double share = !allKnown || served < 0 || total == 0 ? Double.NaN : (double) served / total;
            shares.add(new ExperimentResult.ProviderShare(provider.spec().name(), provider.spec().weight(), served,
                    share, (double) provider.spec().weight() / weights));
        }
        return shares;
    }

    private Path createRunDir() throws ExperimentException {
        try {
            if (settings.runDir() != null) {
                return Files.createDirectories(settings.runDir());
            }
            return Files.createTempDirectory("weft-demo-");
        } catch (IOException e) {
            throw new ExperimentException("cannot create the run directory "
                    + (settings.runDir() == null ? "in " + System.getProperty("java.io.tmpdir") : settings.runDir())
                    + ": " + e.getMessage(), e);
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the run directory " + dir, e);
        }
    }

    /** This JVM's class path with every entry made absolute, so the children do not depend on the working directory. */
    static String absoluteClassPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath().normalize().toString())
                .collect(Collectors.joining(File.pathSeparator));
    }

    /** The JVM running this one, so children use the same JDK 25 without needing JAVA_HOME. */
    static String javaExecutable() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    private void say(String line) {
        if (settings.out() != null) {
            settings.out().println("demo: " + line);
        }
    }

    private record RunningProvider(ProviderSpec spec, int appPort) {}

    private record Topology(int consumerPort, List<RunningProvider> providers) {}
}
