package dev.weft.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What carries the experiment's traffic between the consumer and the providers: something that knows how to start
 * the two proxy roles of a sidecar mesh.
 *
 * <ul>
 *   <li>the <b>provider-side</b> proxy fronts one provider (one per provider, like a sidecar) and never lets more than
 *       the provider's capacity reach it;</li>
 *   <li>the <b>consumer-side</b> proxy listens where the consumer's provider URL points and spreads the requests
 *       over the provider-side proxies by weight, within each one's capacity.</li>
 * </ul>
 *
 * {@link Experiment} starts the apps and asks the data plane for its proxies, so the same topology runs with Weft,
 * with nginx, HAProxy or Caddy in both roles ({@link PeerDataPlane}), or with no proxy at all
 * ({@link DirectDataPlane}).
 */
public interface DataPlane {

    /** Short name used in tables and file names: weft, weft-vt, nginx, direct... */
    String name();

    /** One line for the report: version and the settings that matter (weights, limits, pools). */
    String description();

    /** False only for {@code direct}: the consumer then calls the provider itself. */
    default boolean proxied() {
        return true;
    }

    /** {@link #threads()} of a plane whose proxies run on their own default number of threads. */
    int OWN_DEFAULT_THREADS = 0;
    /** {@link #threads()} of a plane without proxies ({@code direct}). */
    int NO_PROXY_THREADS = -1;

    /**
     * The threads each proxy of this plane carries traffic on: Weft's Workers ({@code --workers}), HAProxy's
     * {@code nbthread}, nginx's {@code worker_processes}, Caddy's {@code GOMAXPROCS}; {@link #OWN_DEFAULT_THREADS}
     * when each proxy's own default applies, {@link #NO_PROXY_THREADS} when there is no proxy.
     */
    default int threads() {
        return OWN_DEFAULT_THREADS;
    }

    /**
     * This plane with every proxy on {@code n} threads, so that planes compare at equal thread counts. A plane
     * whose count is fixed (no proxy, or a variant defined by its count) returns itself.
     */
    default DataPlane withThreads(int n) {
        return this;
    }

    /** Whether the proxies find each other through the registry (Weft) rather than a static list (the peers). */
    default boolean usesRegistry() {
        return false;
    }

    /**
     * Starts the proxy in front of one provider and waits until it accepts traffic.
     *
     * @param provider the provider app: its name, port, weight, and the capacity the proxy must enforce
     *                 (0 = unlimited)
     * @return the proxy; {@link Proxy#port()} is where the consumer side sends this provider's share
     */
    Proxy startProviderSide(Context ctx, Upstream provider) throws ExperimentException, InterruptedException;

    /**
     * Starts the consumer's proxy on {@code listenPort} and waits until it accepts traffic.
     *
     * @param appPort   the consumer app's port (a sidecar checks its app), or the backend's when there is no
     *                  consumer app (the per-hop measurement)
     * @param upstreams the provider-side proxies, each with its provider's weight and capacity
     */
    Proxy startConsumerSide(Context ctx, int listenPort, int appPort, List<Upstream> upstreams)
            throws ExperimentException, InterruptedException;

    /**
     * @param capacity most requests in flight at this upstream; 0 for no limit
     */
    record Upstream(String name, int port, int weight, int capacity) {}

    /**
     * A started proxy.
     *
     * @param pid   its process (with any children it forks: nginx's workers), measured for CPU and memory
     * @param port  where it accepts the traffic of its role
     * @param ready from starting the process to the first moment it was ready (accepted a connection, or its
     *              readiness endpoint answered 200)
     * @param admin its admin port on loopback ({@code /metrics}), 0 for a proxy without one (the peers)
     */
    record Proxy(String name, long pid, int port, Duration ready, int admin) {}

    /** What {@link Experiment} lends a data plane to start its processes. */
    interface Context {
        Path runDir();

        /** A free loopback port (see {@link FreePorts}). */
        int pickPort();

        /** The registry URL the Weft sidecars use. */
        String registry();

        /**
         * Where Weft sidecars post spans: the demo's control plane when the registry is not that control plane (etcd);
         * null when the sidecars' default (the control plane of their weft:// registry) already is.
         */
        String traceEndpoint();

        Duration startTimeout();

        /**
         * Starts {@code ./weft ARGS} as a child JVM with the experiment's class path. Its output goes to
         * {@code NAME.log} in the run directory.
         *
         * @param jvmOptions options after the flags every Weft JVM needs; empty for the experiment's default heap
         * @param ports      ports in {@code args} it will bind, named in the error if it cannot
         */
        ChildProcess launchWeft(String name, List<String> jvmOptions, List<Integer> ports, List<String> args)
                throws ExperimentException;

        /** Starts any other program, in the foreground, with {@code NAME.log} for its output. */
        ChildProcess launch(String name, List<String> command, Map<String, String> environment, List<Integer> ports)
                throws ExperimentException;

        HttpProbe http();

        /**
         * A join token for one sidecar of {@code service}, made by the experiment's control plane as
         * {@code ./weft token create} makes one, in a file of the run directory for the sidecar's {@code --token-file}.
         *
         * @param sidecar the sidecar's name, which names the file
         * @return the file, or null when the registry is not the experiment's control plane (an etcd registry has no
         *         certificate authority, and takes registrations without one)
         * @throws ExperimentException when the control plane makes none
         */
        Path joinToken(String service, String sidecar) throws ExperimentException, InterruptedException;

        /** A progress line. */
        void say(String line);
    }
}
