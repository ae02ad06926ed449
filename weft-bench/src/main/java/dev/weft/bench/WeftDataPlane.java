package dev.weft.bench;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Weft's own sidecars in both roles: {@code ./weft sidecar} processes that register with the registry and find each
 * other through it. The provider side registers the provider's weight and capacity, which the consumer side's
 * balancer honours.
 *
 * @param name         the name in the tables: {@code weft}, or a variant's ({@code weft-vt}, {@code weft-http1})
 * @param collaborator {@code --collaborator}: event-loop or virtual-thread
 * @param meshProtocol {@code --mesh-protocol} between the sidecars (wmp or http1); null leaves the flag out, so
 *                     the sidecar's default (WMP) applies
 * @param jvmOptions   the sidecar JVMs' options (heap, collector...) after the flags every Weft JVM needs; empty
 *                     for the experiment's child default
 * @param weighted     whether provider sidecars register the providers' weights (1:2:3); false registers weight 1
 *                     for all, so the balancer has only what it measures to go by
 * @param balancer     the consumer sidecar's {@code --balancer}; null for its default
 */
public record WeftDataPlane(String name, String collaborator, String meshProtocol, List<String> jvmOptions,
                            boolean weighted, String balancer) implements DataPlane {

    public WeftDataPlane {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(collaborator, "collaborator");
        jvmOptions = List.copyOf(jvmOptions);
    }

    public WeftDataPlane(String name, String collaborator, String meshProtocol, List<String> jvmOptions) {
        this(name, collaborator, meshProtocol, jvmOptions, true, null);
    }

    /** This data plane under another name, with or without registered weights, and a consumer-side balancer. */
    public WeftDataPlane balancing(String newName, boolean registerWeights, String consumerBalancer) {
        return new WeftDataPlane(newName, collaborator, meshProtocol, jvmOptions, registerWeights, consumerBalancer);
    }

    /** The demo's data plane: the sidecar's defaults, the experiment's child JVM options. */
    public static WeftDataPlane defaults() {
        return new WeftDataPlane("weft", "event-loop", null, List.of());
    }

    public WeftDataPlane withJvmOptions(List<String> options) {
        return new WeftDataPlane(name, collaborator, meshProtocol, options, weighted, balancer);
    }

    @Override
    public String description() {
        return "Weft sidecars, --collaborator " + collaborator + ", mesh protocol "
                + (meshProtocol == null ? "wmp (default)" : meshProtocol)
                + (weighted ? ", weights" : ", no weights (all 1)") + " and capacity from the registry"
                + (balancer == null ? "" : ", consumer balancer " + balancer) + ", JVM " + (jvmOptions.isEmpty() ? "defaults"
                : String.join(" ", jvmOptions));
    }

    @Override
    public boolean usesRegistry() {
        return true;
    }

    @Override
    public Proxy startProviderSide(Context ctx, Upstream provider) throws ExperimentException, InterruptedException {
        return startSidecar(ctx, "sidecar-provider-" + provider.name(), List.of(
                "--service", "provider",
                "--app", Experiment.LOOPBACK + ":" + provider.port(),
                "--registry", ctx.registry(),
                "--weight", Integer.toString(weighted ? provider.weight() : 1),
                "--capacity", Integer.toString(provider.capacity()),
                "--id", "provider-" + provider.name()), List.of());
    }

    @Override
    public Proxy startConsumerSide(Context ctx, int listenPort, int appPort, List<Upstream> upstreams)
            throws ExperimentException, InterruptedException {
        // The providers are found through the registry; the upstream list is what they registered.
        List<String> args = new ArrayList<>(List.of(
                "--service", "consumer",
                "--app", Experiment.LOOPBACK + ":" + appPort,
                "--upstream", "provider=" + Experiment.LOOPBACK + ":" + listenPort,
                "--registry", ctx.registry()));
        if (balancer != null) {
            args.addAll(List.of("--balancer", balancer));
        }
        Proxy sidecar = startSidecar(ctx, "sidecar-consumer", args, List.of(listenPort));
        return new Proxy(sidecar.name(), sidecar.pid(), listenPort, sidecar.ready());
    }

    /** Starts a sidecar on fresh inbound and admin ports and waits for its {@code /ready}. */
    private Proxy startSidecar(Context ctx, String name, List<String> args, List<Integer> extraPorts)
            throws ExperimentException, InterruptedException {
        int inbound = ctx.pickPort();
        int admin = ctx.pickPort();
        List<String> command = new ArrayList<>(args);
        command.addAll(List.of("--inbound", Experiment.LOOPBACK + ":" + inbound,
                "--admin", Experiment.LOOPBACK + ":" + admin));
        if (!collaborator.equals("event-loop")) {
            command.addAll(List.of("--collaborator", collaborator));
        }
        if (meshProtocol != null) {
            command.addAll(List.of("--mesh-protocol", meshProtocol));
        }
        List<Integer> bound = new ArrayList<>(List.of(inbound, admin));
        bound.addAll(extraPorts);
        List<String> all = new ArrayList<>(List.of("sidecar"));
        all.addAll(command);
        ChildProcess sidecar = ctx.launchWeft(name, jvmOptions, bound, all);
        Duration ready = sidecar.awaitReady(ctx.http(),
                URI.create("http://" + Experiment.LOOPBACK + ":" + admin + "/ready"), ctx.startTimeout());
        ctx.say(name + " ready in " + ready.toMillis() + " ms: inbound " + Experiment.LOOPBACK + ":" + inbound
                + ", admin " + Experiment.LOOPBACK + ":" + admin + " (pid " + sidecar.pid() + ")");
        return new Proxy(name, sidecar.pid(), inbound, ready);
    }
}
