package dev.weft.bench;

import dev.weft.dataplane.SidecarJvm;

import java.net.URI;
import java.time.Duration;
import java.nio.file.Path;
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
 *                     for the experiment's child default. With {@link SidecarJvm#options()} the sidecars also get
 *                     the AOT cache {@code ./weft} trained, as {@code ./weft sidecar} does
 * @param weighted     whether provider sidecars register the providers' weights (1:2:3); false registers weight 1
 *                     for all, so the balancer has only what it measures to go by
 * @param balancer     the consumer sidecar's {@code --balancer}; null for its default
 * @param extraArgs    more sidecar flags, e.g. {@code --tracing off --metrics off} for {@code weft-bare}, the
 *                     baseline that prices observability in the same run; a {@code --workers} here fixes the
 *                     plane's thread count ({@code weft-1w})
 * @param workers      every sidecar's {@code --workers}; {@link #OWN_DEFAULT_THREADS} leaves the flag out, so the
 *                     sidecar's default applies (min(2, its CPUs))
 * @param mtls         every sidecar's {@code --mtls} (strict, permissive or off); null keeps the plaintext link
 *                     ({@code --mtls off}, on an etcd registry too). Every sidecar registering with the
 *                     experiment's control plane gets a join token for its service, made as {@code ./weft token
 *                     create} does ({@link DataPlane.Context#joinToken}): it registers with it, and with strict or
 *                     permissive gets its certificate with it, so that the mesh link is mTLS
 */
public record WeftDataPlane(String name, String collaborator, String meshProtocol, List<String> jvmOptions,
                            boolean weighted, String balancer, List<String> extraArgs, int workers, String mtls)
        implements DataPlane {

    public WeftDataPlane {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(collaborator, "collaborator");
        jvmOptions = List.copyOf(jvmOptions);
        extraArgs = List.copyOf(extraArgs);
    }

    public WeftDataPlane(String name, String collaborator, String meshProtocol, List<String> jvmOptions,
                         List<String> extraArgs) {
        this(name, collaborator, meshProtocol, jvmOptions, true, null, extraArgs, OWN_DEFAULT_THREADS, null);
    }

    public WeftDataPlane(String name, String collaborator, String meshProtocol, List<String> jvmOptions) {
        this(name, collaborator, meshProtocol, jvmOptions, List.of());
    }

    /** This data plane under another name, with or without registered weights, and a consumer-side balancer. */
    public WeftDataPlane balancing(String newName, boolean registerWeights, String consumerBalancer) {
        return new WeftDataPlane(newName, collaborator, meshProtocol, jvmOptions, registerWeights, consumerBalancer,
                extraArgs, workers, mtls);
    }

    /**
     * The demo's data plane: the sidecar's defaults in the JVM users run ({@link SidecarJvm#options()}, and the AOT
     * cache when {@code ./weft} trained one), so the demo shows the sidecars as {@code ./weft sidecar} starts them.
     */
    public static WeftDataPlane defaults() {
        return new WeftDataPlane("weft", "event-loop", null, SidecarJvm.options());
    }

    /**
     * The demo's data plane: {@link #defaults()} with {@code --mtls strict}, each sidecar holding a certificate it
     * got with a join token, as a user would run the mesh (docs/security.md).
     */
    public static WeftDataPlane demo() {
        return defaults().withMtls("strict");
    }

    public WeftDataPlane withJvmOptions(List<String> options) {
        return new WeftDataPlane(name, collaborator, meshProtocol, options, weighted, balancer, extraArgs, workers,
                mtls);
    }

    /** This data plane with every sidecar on {@code --mtls mode} (and a join token unless the mode is off). */
    public WeftDataPlane withMtls(String mode) {
        return new WeftDataPlane(name, collaborator, meshProtocol, jvmOptions, weighted, balancer, extraArgs, workers,
                mode);
    }

    /** Whether each sidecar gets a join token, so that it holds a certificate and dials and accepts mTLS. */
    public boolean joinsWithToken() {
        return mtls != null && !mtls.equals("off");
    }

    @Override
    public int threads() {
        int fixed = extraArgs.indexOf("--workers");
        return fixed >= 0 && fixed + 1 < extraArgs.size() ? Integer.parseInt(extraArgs.get(fixed + 1)) : workers;
    }

    @Override
    public WeftDataPlane withThreads(int n) {
        if (extraArgs.contains("--workers")) {
            return this;
        }
        return new WeftDataPlane(name, collaborator, meshProtocol, jvmOptions, weighted, balancer, extraArgs, n, mtls);
    }

    @Override
    public String description() {
        return "Weft sidecars, --collaborator " + collaborator + ", mesh protocol "
                + (meshProtocol == null ? "wmp (default)" : meshProtocol)
                + (extraArgs.isEmpty() ? "" : ", " + String.join(" ", extraArgs))
                + (workers > 0 ? ", --workers " + workers
                        : extraArgs.contains("--workers") ? "" : ", the sidecar's default Workers (min(2, CPUs))")
                + (weighted ? ", weights" : ", no weights (all 1)") + " and capacity from the registry"
                + (balancer == null ? "" : ", consumer balancer " + balancer)
                + (mtls == null ? ", plaintext link (--mtls off; a join token per sidecar registers it)"
                        : ", --mtls " + mtls + " with a join token per sidecar")
                + ", JVM " + (jvmOptions.isEmpty()
                ? "defaults" : String.join(" ", jvmOptions)) + (SidecarJvm.aotCache(jvmOptions).isPresent()
                ? ", with the AOT cache" : ", without an AOT cache");
    }

    @Override
    public boolean usesRegistry() {
        return true;
    }

    @Override
    public Proxy startProviderSide(Context ctx, Upstream provider) throws ExperimentException, InterruptedException {
        return startSidecar(ctx, "provider", "sidecar-provider-" + provider.name(), List.of(
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
        Proxy sidecar = startSidecar(ctx, "consumer", "sidecar-consumer", args, List.of(listenPort));
        return new Proxy(sidecar.name(), sidecar.pid(), listenPort, sidecar.ready(), sidecar.admin());
    }

    /**
     * Starts a sidecar of {@code service} on fresh inbound and admin ports and waits for its {@code /ready}; a strict
     * sidecar is ready only once it holds its certificate.
     */
    private Proxy startSidecar(Context ctx, String service, String name, List<String> args, List<Integer> extraPorts)
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
        if (workers > 0) {
            command.addAll(List.of("--workers", Integer.toString(workers)));
        }
        if (ctx.traceEndpoint() != null) {
            command.addAll(List.of("--trace-endpoint", ctx.traceEndpoint()));
        }
        // Registering with the control plane needs credentials (docs/security.md), so every sidecar gets a join
        // token when the experiment's control plane is its registry (an etcd registry takes registrations itself).
        // A plane that names no mode keeps the plaintext link the bench has always measured it on: --mtls off, where
        // the token only registers; permissive with a token would get a certificate and dial mTLS.
        Path token = ctx.joinToken(service, name);
        if (token == null && joinsWithToken()) {
            throw new ExperimentException("sidecar " + name + " runs --mtls " + mtls + ", which needs a join token,"
                    + " and only the experiment's own control plane makes them (an etcd registry has no CA)");
        }
        // Said even on etcd, where no sidecar can hold a certificate: strict, the sidecar's default, would not start.
        command.addAll(List.of("--mtls", mtls != null ? mtls : "off"));
        if (token != null) {
            command.addAll(List.of("--token-file", token.toString()));
        }
        command.addAll(extraArgs);
        List<Integer> bound = new ArrayList<>(List.of(inbound, admin));
        bound.addAll(extraPorts);
        List<String> all = new ArrayList<>(List.of("sidecar"));
        all.addAll(command);
        // The cache ./weft trained for these options, if any: the same JVM as `./weft sidecar` (docs/operations.md).
        List<String> jvm = new ArrayList<>(jvmOptions);
        SidecarJvm.aotCache(jvmOptions).ifPresent(cache -> jvm.add("-XX:AOTCache=" + cache));
        ChildProcess sidecar = ctx.launchWeft(name, jvm, bound, all);
        Duration ready = sidecar.awaitReady(ctx.http(),
                URI.create("http://" + Experiment.LOOPBACK + ":" + admin + "/ready"), ctx.startTimeout());
        ctx.say(name + " ready in " + ready.toMillis() + " ms: inbound " + Experiment.LOOPBACK + ":" + inbound
                + ", admin " + Experiment.LOOPBACK + ":" + admin + " (pid " + sidecar.pid() + ")");
        return new Proxy(name, sidecar.pid(), inbound, ready, admin);
    }
}
