package dev.weft.bench;

import dev.weft.registry.Registries;
import dev.weft.registry.support.Durations;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The paper's experiment on loopback, every component its own OS process:
 *
 * <pre>
 *   LoadGenerator --HTTP--> consumer --HTTP--> consumer-side proxy ==link==> provider-side proxies --HTTP--> providers
 *   (this process)                                                                                small  (weight 1)
 *                                                                                                 medium (weight 2)
 *                                                                                                 large  (weight 3)
 * </pre>
 *
 * The proxies come from a {@link DataPlane}: Weft's sidecars (the demo; they find each other through the registry,
 * {@code weft control} or {@code --registry}), nginx, HAProxy or Caddy in both roles, or none ({@code direct}).
 * {@link Shape#HOP} replaces the apps by one backend without delay, to measure the proxies themselves.
 *
 * <p>{@link #startTopology} shows the whole topology in start order. Each step waits until its process is ready, so
 * a failure names the process that did not come up. {@link #run} measures one load; {@link #start} returns the
 * running topology so that {@link #measure} can be called for several loads on the same processes, each reading
 * the proxies' CPU and memory, the machine's CPU and the bytes on the link at the edges of its measured window.
 * Everything started is stopped at the end ({@link #close}), on failure, and from a shutdown hook on Ctrl-C.
 */
public final class Experiment implements AutoCloseable {
    /** The command line every child runs; {@link ExperimentSettings#mainClass()} replaces it in tests. */
    public static final String WEFT_CLI_MAIN = "dev.weft.cli.WeftCli";

    /** The paper's providers: their resources are small:medium:large = 1:2:3, which the mesh sees as weights. */
    public static final List<ProviderSpec> PROVIDERS = List.of(
            new ProviderSpec("small", 1), new ProviderSpec("medium", 2), new ProviderSpec("large", 3));

    static final String LOOPBACK = "127.0.0.1";
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    private static final Pattern CONTROL_READY = Pattern.compile("weft control listening on (\\S+:\\d+)");
    private static final Pattern CONSUMER_READY = Pattern.compile("consumer listening on \\S+:(\\d+)");

    public record ProviderSpec(String name, int weight) {}

    /** What is started around the data plane. */
    public enum Shape {
        /**
         * The paper's experiment: load generator, consumer app, consumer-side proxy, provider-side proxies, the three
         * providers (weights 1:2:3, each limited to its {@code providerCapacities}). With {@link DirectDataPlane}
         * the consumer calls one provider holding the three's capacity.
         */
        MESH,
        /**
         * The cost of the proxies themselves: load generator, consumer-side proxy, provider-side proxy, one backend
         * (the provider app without limit, normally without delay), no consumer app. Two proxies, because a Weft
         * hop is always a pair of sidecars; the bench reports per hop as half of the pair.
         */
        HOP
    }

    private final ExperimentSettings settings;
    private final ChildProcesses children = new ChildProcesses();
    private final FreePorts ports = new FreePorts();
    private final HttpProbe http = new HttpProbe();
    private final Map<String, Long> providerPids = new java.util.concurrent.ConcurrentHashMap<>();
    /** The consumer app's process, -1 without one (per hop). */
    private volatile long consumerPid = -1;
    /** The control plane's and the apps' AOT caches ./weft trained, or the training of them. */
    private final AppAot aot = AppAot.fromEnvironment();
    /**
     * Ctrl-C or a kill: the topology stops, then whatever else this JVM started. A load generator runs outside
     * {@link #children} (wrk is waited for by the thread that started it, which a JVM ending does not unwind), and
     * a wrk left running spins on its closed connections for the rest of its duration, stealing the CPU of the
     * next run on the machine (seen: a later bench at half its QPS for six minutes).
     */
    private final Thread shutdownHook = new Thread(() -> {
        children.stopAll(aot.stopGrace(STOP_GRACE));
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
    }, "weft-demo-shutdown");
    private Path runDir;
    private String registry;
    private String traceEndpoint;
    /** The control plane's {@code HOST:PORT}; null when the data plane runs none. */
    private String controlAddress;
    private Topology topology;
    private boolean failed;
    private boolean keepLogs;
    private boolean closed;
    /**
     * The control plane's pid, or -1 when the plane runs none: its CPU is the mesh's too (it stores the sidecars'
     * spans), so the tables report it beside the proxies'.
     */
    private long controlPid = -1;

    private Experiment(ExperimentSettings settings) {
        this.settings = settings;
    }

    /**
     * Starts the topology, measures it once ({@code settings.connections()} after {@code settings.warmup()} for
     * {@code settings.duration()}), stops it and returns what was measured.
     *
     * @throws ExperimentException naming the process that did not come up, with the tail of its log
     */
    public static ExperimentResult run(ExperimentSettings settings) throws ExperimentException, InterruptedException {
        try (Experiment experiment = start(settings)) {
            return experiment.measure(settings.connections(), settings.warmup(), settings.duration());
        }
    }

    /**
     * Starts the topology and returns it running, so that several loads can be measured on the same processes
     * ({@link #measure}); {@link #close} stops everything. On failure everything started is stopped and the logs
     * are kept.
     */
    public static Experiment start(ExperimentSettings settings) throws ExperimentException, InterruptedException {
        Experiment experiment = new Experiment(settings);
        experiment.runDir = RunDirectory.create(settings);
        experiment.say("run directory: " + experiment.runDir + " (one log per process); " + experiment.aot.describe());
        Runtime.getRuntime().addShutdownHook(experiment.shutdownHook);
        try {
            experiment.topology = experiment.startTopology();
            return experiment;
        } catch (ExperimentException | InterruptedException | RuntimeException e) {
            experiment.failed = true;
            experiment.close();
            throw e;
        }
    }

    /** Where the load goes: the consumer app, or the first proxy when there is no consumer app. */
    public URI target() {
        return URI.create("http://" + LOOPBACK + ":" + topology.entryPort() + "/");
    }

    public Path runDir() {
        return runDir;
    }

    /**
     * The operator token of the control plane this experiment started (its data dir's admin.token), for what the
     * bench writes to it: {@code weft apply}, token creation (docs/security.md).
     */
    public Path adminTokenFile() {
        return runDir.resolve("control-data").resolve("admin.token");
    }

    /** The registry the sidecars use ({@code weft://HOST:PORT} of the control plane it started); null without one. */
    public String registry() {
        return registry;
    }

    /** Each provider app's port by provider name (for {@code /stats} and {@code POST /fault}), in start order. */
    public Map<String, Integer> providerPorts() {
        Map<String, Integer> m = new LinkedHashMap<>();
        topology.providers().forEach(p -> m.put(p.spec().name(), p.appPort()));
        return m;
    }

    /** Each provider app's process id by provider name, e.g. to {@code kill -9} it. */
    public Map<String, Long> providerPids() {
        return Map.copyOf(providerPids);
    }

    /**
     * The example apps' processes (providers, consumer): the same requests for every data plane, so their CPU is the
     * yardstick that divides the machine's speed out of a plane's rounds ({@code BenchRow#proxyCpuPerWork}).
     */
    private List<Long> appPids() {
        List<Long> pids = new ArrayList<>(providerPids.values());
        if (consumerPid > 0) {
            pids.add(consumerPid);
        }
        return pids;
    }

    /**
     * Runs the load with {@code listener} told of each phase and each second: for scenarios that act on the topology
     * while the load runs (see {@link ResilienceBench}). Always the built-in generator, whatever
     * {@link ExperimentSettings#generator()} says: wrk reports no seconds.
     */
    public LoadResult load(int connections, Duration warmup, Duration duration, LoadGenerator.PhaseListener listener)
            throws InterruptedException {
        return LoadGenerator.run(loadSettings(target(), connections, duration, warmup, true), listener);
    }

    /** A load on {@code target} with this experiment's timeout, threads and provider delay; progress printed or not. */
    private LoadGenerator.Settings loadSettings(URI target, int connections, Duration duration, Duration warmup,
                                                boolean progress) {
        return new LoadGenerator.Settings(target, connections, duration, warmup, settings.loadTimeout(),
                settings.loadThreads(), settings.providerDelay(), progress ? settings.out() : null);
    }

    /** The client the experiment calls its processes' admin and ready endpoints with (closed with it). */
    HttpProbe http() {
        return http;
    }

    /** Every proxy started, provider side first; empty for {@code direct}. */
    public List<DataPlane.Proxy> proxies() {
        return topology.proxies();
    }

    /** Keeps the run directory after {@link #close}, e.g. because a measurement saw errors worth reading about. */
    public void keepLogs() {
        keepLogs = true;
    }

    /**
     * Stops every process it started, newest first. The run directory is deleted when nothing failed and the logs
     * were not asked for. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        say("stopping every process it started");
        children.stopAll(aot.stopGrace(STOP_GRACE));
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // Ctrl-C: the hook is already running and stops the processes itself.
        }
        http.close();
        if (!failed && !keepLogs && !settings.keepLogs()) {
            RunDirectory.delete(runDir);
        } else if (failed || keepLogs) {
            say("logs kept in " + runDir);
        }
    }

    /**
     * The topology, started from the back to the front so that each part finds what it depends on: registry (when
     * the data plane uses one), then each provider with its provider-side proxy, then the consumer with its
     * consumer-side proxy. The consumer app starts before its proxy because a Weft sidecar checks its app.
     */
    private Topology startTopology() throws ExperimentException, InterruptedException {
        DataPlane plane = settings.dataPlane();
        if (plane.usesRegistry()) {
            // The control plane runs either way: on the given registry (etcd) it serves the same API from there, and
            // collects the sidecars' spans (./weft trace), which stay in its memory.
            String control = startControlPlane(settings.registry());
            registry = settings.registry() != null ? settings.registry() : "weft://" + control;
            traceEndpoint = settings.registry() != null ? "http://" + control + "/api/v2/spans" : null;
        }
        Launcher launcher = new Launcher();
        List<Topology.RunningProvider> providers = new ArrayList<>();
        List<DataPlane.Upstream> upstreams = new ArrayList<>();
        List<DataPlane.Proxy> proxies = new ArrayList<>();
        List<ProviderSpec> specs = settings.providerSpecs();
        for (int i = 0; i < specs.size(); i++) {
            ProviderSpec spec = specs.get(i);
            // The capacity each provider-side proxy enforces (and the consumer side honours); 0 = none.
            int capacity = settings.shape() == Shape.HOP ? 0 : settings.providerCapacities().get(i);
            int appPort = startProvider(spec, settings.providerLimit(i));
            DataPlane.Upstream app = new DataPlane.Upstream(spec.name(), appPort, spec.weight(), capacity);
            if (plane.proxied()) {
                DataPlane.Proxy proxy = plane.startProviderSide(launcher, app);
                proxies.add(proxy);
                upstreams.add(new DataPlane.Upstream(spec.name(), proxy.port(), spec.weight(), capacity));
            } else {
                upstreams.add(app);
            }
            providers.add(new Topology.RunningProvider(spec, appPort));
        }
        int providerEntry = plane.proxied() ? ports.pick() : upstreams.getFirst().port();
        int consumerPort = settings.shape() == Shape.MESH ? startConsumer(providerEntry) : -1;
        if (plane.proxied()) {
            int app = consumerPort > 0 ? consumerPort : providers.getFirst().appPort();
            proxies.add(plane.startConsumerSide(launcher, providerEntry, app, upstreams));
        }
        Set<Integer> linkPorts = new LinkedHashSet<>();
        if (plane.proxied()) {
            upstreams.forEach(u -> linkPorts.add(u.port()));
        }
        return new Topology(consumerPort > 0 ? consumerPort : providerEntry, providers, List.copyOf(proxies),
                linkPorts);
    }

    /**
     * @param external a registry URL to keep the control plane's state in, or null for its own data dir
     * @return the control plane's {@code HOST:PORT}, as it printed it
     */
    private String startControlPlane(String external) throws ExperimentException, InterruptedException {
        Path dataDir = runDir.resolve("control-data");
        List<String> args = new ArrayList<>(List.of("control", "--listen", LOOPBACK + ":0"));
        if (external != null) {
            args.addAll(List.of("--registry", external));
        }
        args.addAll(List.of("--data-dir", dataDir.toString()));
        ChildProcess control = launchJvm("control plane", "control.log", List.of(), List.of(),
                args.toArray(String[]::new));
        String address = control.awaitOutput(CONTROL_READY, "weft control listening on HOST:PORT",
                settings.startTimeout()).group(1);
        controlAddress = address;
        say("control plane ready on " + address
                + (external == null ? "" : " (state in " + Registries.redact(external) + ")")
                + " (pid " + control.pid() + ")");
        controlPid = control.pid();
        return address;
    }

    /** @return the port the provider bound (it is given port 0 and prints the one it got) */
    private int startProvider(ProviderSpec spec, int limit) throws ExperimentException, InterruptedException {
        ChildProcess provider = launchJvm("provider " + spec.name(), "provider-" + spec.name() + ".log", List.of(),
                List.of(), "provider", "--listen", LOOPBACK + ":0", "--name", spec.name(),
                "--max-concurrency", Integer.toString(limit),
                "--delay-ms", Long.toString(settings.providerDelay().toMillis()));
        Pattern ready = Pattern.compile("provider " + Pattern.quote(spec.name()) + " listening on \\S+:(\\d+)");
        int port = Integer.parseInt(provider.awaitOutput(ready,
                "provider " + spec.name() + " listening on HOST:PORT", settings.startTimeout()).group(1));
        say("provider " + spec.name() + " ready on " + LOOPBACK + ":" + port + " (pid " + provider.pid() + ")");
        providerPids.put(spec.name(), provider.pid());
        return port;
    }

    private int startConsumer(int upstreamPort) throws ExperimentException, InterruptedException {
        ChildProcess consumer = launchJvm("consumer", "consumer.log", List.of(), List.of(),
                "consumer", "--listen", LOOPBACK + ":0", "--provider-url", "http://" + LOOPBACK + ":" + upstreamPort);
        int port = Integer.parseInt(consumer.awaitOutput(CONSUMER_READY, "consumer listening on HOST:PORT",
                settings.startTimeout()).group(1));
        say("consumer ready on " + LOOPBACK + ":" + port + " (pid " + consumer.pid() + ")");
        consumerPid = consumer.pid();
        return port;
    }

    /**
     * Starts a child JVM running {@code mainClass args} ({@link ChildJvm}).
     *
     * @param jvmOptions options after the flags every Weft JVM needs; empty for {@code -Xmx childHeap}. The AOT
     *                   cache of the subcommand ({@code args[0]}) is added when it was trained with these options
     */
    private ChildProcess launchJvm(String name, String logFile, List<String> jvmOptions, List<Integer> boundPorts,
                                String... args) throws ExperimentException {
        List<String> options = jvmOptions.isEmpty() ? List.of("-Xmx" + settings.childHeap()) : jvmOptions;
        // The caches hold the class path of ./weft's WeftCli: a test's stand-in main class runs without.
        if (settings.mainClass().equals(WEFT_CLI_MAIN)) {
            options = aot.options(args[0], options);
        }
        List<String> command = ChildJvm.command(options, settings.mainClass(), List.of(args));
        ChildProcess child = ChildProcess.start(name, command, runDir.resolve(logFile), boundPorts);
        children.add(child);
        return child;
    }

    /** What the data plane may use to start its proxies: this experiment's run directory, ports and processes. */
    private final class Launcher implements DataPlane.Context {
        @Override
        public Path runDir() {
            return runDir;
        }

        @Override
        public int pickPort() {
            return ports.pick();
        }

        @Override
        public String registry() {
            return registry;
        }

        @Override
        public String traceEndpoint() {
            return traceEndpoint;
        }

        @Override
        public Duration startTimeout() {
            return settings.startTimeout();
        }

        @Override
        public ChildProcess launchWeft(String name, List<String> jvmOptions, List<Integer> boundPorts,
                                       List<String> args) throws ExperimentException {
            return launchJvm(name, name + ".log", jvmOptions, boundPorts, args.toArray(String[]::new));
        }

        @Override
        public ChildProcess launch(String name, List<String> command, Map<String, String> environment,
                                   List<Integer> boundPorts) throws ExperimentException {
            ChildProcess child = ChildProcess.start(name, command, environment, runDir.resolve(name + ".log"),
                    boundPorts);
            children.add(child);
            return child;
        }

        @Override
        public HttpProbe http() {
            return http;
        }

        @Override
        public void say(String line) {
            Experiment.this.say(line);
        }

        @Override
        public Path joinToken(String service, String sidecar) throws ExperimentException, InterruptedException {
            if (controlAddress == null || settings.registry() != null) {
                return null;
            }
            return MeshTokens.create("weft://" + controlAddress, runDir.resolve("control-data"), service,
                    runDir.resolve(sidecar + ".token"));
        }
    }

    /**
     * Runs the load generator against the running topology and reads, at both edges of the measured window, the
     * providers' counters, the proxies' CPU time, the machine's CPU time and the bytes on the proxies' link.
     */
    public ExperimentResult measure(int connections, Duration warmup, Duration duration) throws InterruptedException {
        return measure(connections, warmup, duration, null);
    }

    private ExperimentResult measure(int connections, Duration warmup, Duration duration, RateSettle settle)
            throws InterruptedException {
        URI target = target();
        say("load: " + connections + " connections to " + target + " for " + Durations.format(duration)
                + " after " + (settle == null ? "" : "at most ") + Durations.format(warmup) + " warm-up");
        LoadGenerator.Settings load = loadSettings(target, connections, duration, warmup, true);
        WindowSampler sampler = new WindowSampler(topology, controlPid, appPids(), http, this::say);
        try {
            LoadResult result = settings.generator().run(load, settle == null ? sampler : settle.around(sampler),
                    runDir);
            return new ExperimentResult(result, sampler.shares(), runDir, settings.keepLogs(), sampler.figures());
        } catch (InterruptedException | RuntimeException e) {
            failed = true;
            throw e;
        }
    }

    /**
     * Loads the running topology in {@link JitSettle#STEP}s, unrecorded, until its proxies' JIT compilers settle or
     * {@code cap} is spent (see {@link JitSettle}); at once for proxies without a JIT.
     */
    public JitSettle.Outcome settleJit(int connections, Duration cap) throws InterruptedException {
        LoadGenerator.Settings step = loadSettings(target(), connections, JitSettle.STEP, Duration.ZERO, false);
        return JitSettle.run(JitSettle.Meter.of(topology.proxies()), cap,
                () -> settings.generator().run(step, new LoadGenerator.PhaseListener() {}, runDir));
    }

    /**
     * One continuous load: a warm-up of at most {@code cap}, ended as soon as {@link RateSettle} finds two 5 s windows
     * in a row within 5 % of each other with the proxies' JIT settled in the last, then {@code duration} measured on
     * the same connections. With the built-in generator only: wrk reports no seconds, so its warm-up would run to the
     * cap.
     */
    public Settled measureAfterWarmUp(int connections, Duration cap, Duration duration) throws InterruptedException {
        if (!cap.isZero()) {
            say("warm-up: at most " + Durations.format(cap) + ", until two " + RateSettle.WINDOW.toSeconds()
                    + " s windows in a row are within " + Math.round(RateSettle.WITHIN * 100) + "% and the sidecars'"
                    + " JIT used under " + Math.round(JitSettle.SETTLED_SHARE * 100) + "% of their CPU in the last");
        }
        RateSettle settle = new RateSettle(JitSettle.Meter.of(topology.proxies()));
        ExperimentResult result = measure(connections, cap, duration, settle);
        return new Settled(result, cap.isZero() ? RateSettle.Outcome.NONE : settle.outcome());
    }

    /** A measurement and how its warm-up ended. */
    public record Settled(ExperimentResult result, RateSettle.Outcome warmUp) {}

    /**
     * Issue 15's steady-state check: the running topology loaded again, {@code gap} unrecorded then {@code duration}
     * measured (as long as {@code first}), and {@code first}'s rate compared with this window's ({@link SteadyCheck}).
     * A load of its own on fresh connections: their opening falls in the unrecorded {@code gap}.
     */
    public SteadyCheck measureAgain(ExperimentResult first, Duration gap, Duration duration)
            throws InterruptedException {
        say("steady-state check: the same topology measured again after another " + Durations.format(gap)
                + " of load");
        ExperimentResult again = measure(first.load().connections(), gap, duration);
        return new SteadyCheck(first.load(), again.load(), gap);
    }

    private void say(String line) {
        if (settings.out() != null) {
            boolean demo = settings.shape() == Shape.MESH && (settings.dataPlane().equals(WeftDataPlane.defaults())
                    || settings.dataPlane().equals(WeftDataPlane.demo()));
            settings.out().println((demo ? "demo" : settings.dataPlane().name() + " " + settings.shape()
                    .name().toLowerCase(java.util.Locale.ROOT)) + ": " + line);
        }
    }
}
