package dev.weft.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * What an {@link Experiment} starts and how it measures: the load, the providers, the data plane between them and
 * where the logs go. Checked when made, so that a typo fails before eight JVMs are started.
 *
 * @param connections        load generator connections (the paper: 128, 256, 512)
 * @param duration           measured time
 * @param warmup             unrecorded load first
 * @param loadTimeout        a request without an answer after this long is a timeout
 * @param loadThreads        the load generator's threads (event loops, or wrk's {@code -t})
 * @param registry           an external registry URL for the sidecars (e.g. etcd); null starts
 *                           {@code weft control} instead
 * @param keepLogs           keep the run directory after a clean run (it is always kept after a failure)
 * @param runDir             where the logs go; null for a new temporary directory
 * @param startTimeout       how long each process may take to become ready
 * @param providerDelay      each provider's simulated work (the paper: 50 ms); none in the {@link Experiment.Shape#HOP}
 *                           shape, whatever is given ({@link #providerDelay()})
 * @param providerCapacities each provider's limit, one per provider of {@link Experiment#PROVIDERS} (small,
 *                           medium, large): the requests it holds at once, also what its proxy enforces (a Weft sidecar
 *                           registers it as {@code --capacity}, a peer gets it as its per-server limit). The
 *                           paper: 200 each; issue 12: 100, 200, 300
 * @param childHeap          {@code -Xmx} of each child JVM, e.g. {@code 256m}
 * @param mainClass          the children's main class, with subcommands control, sidecar, provider, consumer
 * @param out                where progress and the start-up steps are printed; null for silence
 * @param dataPlane          what carries the traffic between consumer and providers (the demo: Weft)
 * @param shape              the paper's mesh, or one proxy chain in front of a trivial backend
 * @param generator          what drives the measured load (the built-in generator, or wrk)
 */
public record ExperimentSettings(int connections, Duration duration, Duration warmup, Duration loadTimeout,
                                 int loadThreads, String registry, boolean keepLogs, Path runDir, Duration startTimeout,
                                 Duration providerDelay, List<Integer> providerCapacities, String childHeap,
                                 String mainClass, PrintStream out, DataPlane dataPlane, Experiment.Shape shape,
                                 Generator generator) {
    public ExperimentSettings {
        Objects.requireNonNull(dataPlane, "dataPlane");
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(warmup, "warmup");
        Objects.requireNonNull(loadTimeout, "loadTimeout");
        Objects.requireNonNull(startTimeout, "startTimeout");
        Objects.requireNonNull(providerDelay, "providerDelay");
        Objects.requireNonNull(childHeap, "childHeap");
        Objects.requireNonNull(mainClass, "mainClass");
        Objects.requireNonNull(generator, "generator");
        providerCapacities = List.copyOf(providerCapacities);
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
        if (providerCapacities.size() != Experiment.PROVIDERS.size() || providerCapacities.stream().anyMatch(c -> c < 1)) {
            throw new IllegalArgumentException("capacities must be " + Experiment.PROVIDERS.size()
                    + " positive numbers, one per provider (small, medium, large), e.g. 100,200,300 (got "
                    + providerCapacities + ")");
        }
        if (!childHeap.matches("\\d+[kKmMgG]?")) {
            throw new IllegalArgumentException("invalid heap size '" + childHeap + "' (expected e.g. 256m or 1g)");
        }
    }

    /**
     * Each provider's work, and what the load generator expects of it: none per hop, where the one backend answers
     * at once so that the proxies are what the load measures. The one place the shape decides it, for the backend's
     * start and every load alike.
     */
    @Override
    public Duration providerDelay() {
        return shape == Experiment.Shape.HOP ? Duration.ZERO : providerDelay;
    }

    /** The mesh's three providers; one provider for {@code direct}; one backend per hop. */
    List<Experiment.ProviderSpec> providerSpecs() {
        if (shape == Experiment.Shape.HOP) {
            return List.of(new Experiment.ProviderSpec("backend", 1));
        }
        return dataPlane.proxied() ? Experiment.PROVIDERS
                : List.of(new Experiment.ProviderSpec(DirectDataPlane.NAME, 1));
    }

    /**
     * The limit of the {@code index}th provider app ({@link #providerSpecs}): its capacity; for direct the three's
     * together; per hop none to speak of.
     */
    int providerLimit(int index) {
        if (shape == Experiment.Shape.HOP) {
            return 1_000_000;
        }
        return dataPlane.proxied() ? providerCapacities.get(index)
                : providerCapacities.stream().mapToInt(Integer::intValue).sum();
    }

    /**
     * The paper's setting: 512 connections, 30 s after a 5 s warm-up, providers of 200 x 50 ms, the built-in
     * load generator.
     */
    public static ExperimentSettings defaults() {
        return new ExperimentSettings(512, Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(5),
                Runtime.getRuntime().availableProcessors(), null, false, null, Duration.ofSeconds(60),
                Duration.ofMillis(50), equalCapacities(200), "256m", Experiment.WEFT_CLI_MAIN, System.err,
                WeftDataPlane.defaults(), Experiment.Shape.MESH, Generator.BUILTIN);
    }

    /** The same capacity for every provider, as in the paper. */
    public static List<Integer> equalCapacities(int capacity) {
        return Collections.nCopies(Experiment.PROVIDERS.size(), capacity);
    }

    public ExperimentSettings withConnections(int n) {
        return with(c -> c.connections = n);
    }

    public ExperimentSettings withDuration(Duration d) {
        return with(c -> c.duration = d);
    }

    public ExperimentSettings withWarmup(Duration d) {
        return with(c -> c.warmup = d);
    }

    public ExperimentSettings withLoadTimeout(Duration d) {
        return with(c -> c.loadTimeout = d);
    }

    public ExperimentSettings withLoadThreads(int n) {
        return with(c -> c.loadThreads = n);
    }

    public ExperimentSettings withRegistry(String url) {
        return with(c -> c.registry = url);
    }

    public ExperimentSettings withKeepLogs(boolean keep) {
        return with(c -> c.keepLogs = keep);
    }

    public ExperimentSettings withRunDir(Path dir) {
        return with(c -> c.runDir = dir);
    }

    public ExperimentSettings withStartTimeout(Duration d) {
        return with(c -> c.startTimeout = d);
    }

    public ExperimentSettings withMainClass(String main) {
        return with(c -> c.mainClass = main);
    }

    public ExperimentSettings withOut(PrintStream stream) {
        return with(c -> c.out = stream);
    }

    public ExperimentSettings withDataPlane(DataPlane plane) {
        return with(c -> c.dataPlane = plane);
    }

    /** The per-hop shape also wants a backend without delay: see {@link Experiment.Shape#HOP}. */
    public ExperimentSettings withShape(Experiment.Shape s) {
        return with(c -> c.shape = s);
    }

    public ExperimentSettings withProviderDelay(Duration d) {
        return with(c -> c.providerDelay = d);
    }

    /** One capacity per provider of {@link Experiment#PROVIDERS}, in its order (small, medium, large). */
    public ExperimentSettings withProviderCapacities(List<Integer> capacities) {
        return with(c -> c.providerCapacities = capacities);
    }

    public ExperimentSettings withGenerator(Generator g) {
        return with(c -> c.generator = g);
    }

    /** A copy with one setting changed (and checked again). */
    private ExperimentSettings with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }

    /** The settings as mutable fields, for {@link #with}. */
    private static final class Copy {
        int connections;
        Duration duration;
        Duration warmup;
        Duration loadTimeout;
        int loadThreads;
        String registry;
        boolean keepLogs;
        Path runDir;
        Duration startTimeout;
        Duration providerDelay;
        List<Integer> providerCapacities;
        String childHeap;
        String mainClass;
        PrintStream out;
        DataPlane dataPlane;
        Experiment.Shape shape;
        Generator generator;

        Copy(ExperimentSettings s) {
            connections = s.connections;
            duration = s.duration;
            warmup = s.warmup;
            loadTimeout = s.loadTimeout;
            loadThreads = s.loadThreads;
            registry = s.registry;
            keepLogs = s.keepLogs;
            runDir = s.runDir;
            startTimeout = s.startTimeout;
            providerDelay = s.providerDelay;
            providerCapacities = s.providerCapacities;
            childHeap = s.childHeap;
            mainClass = s.mainClass;
            out = s.out;
            dataPlane = s.dataPlane;
            shape = s.shape;
            generator = s.generator;
        }

        ExperimentSettings build() {
            return new ExperimentSettings(connections, duration, warmup, loadTimeout, loadThreads, registry, keepLogs,
                    runDir, startTimeout, providerDelay, providerCapacities, childHeap, mainClass, out, dataPlane, shape,
                    generator);
        }
    }
}
