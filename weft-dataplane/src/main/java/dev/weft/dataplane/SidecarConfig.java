package dev.weft.dataplane;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.inbound.AppHealth;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.observe.ObservabilityConfig;
import dev.weft.dataplane.transport.ConnectionTimeouts;
import dev.weft.dataplane.security.MtlsMode;
import dev.weft.dataplane.transport.Transport;
import dev.weft.registry.support.Durations;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Everything a sidecar is started with. Built with {@link #builder}: by {@code ./weft sidecar} from its flags, or
 * directly by tests. The defaults live in {@link Defaults}, which the command's flags show and parse too, so a
 * sidecar built without a setting runs as one started without the flag. Names (balancer, Collaborator, mesh
 * protocol) are parsed once, when set, with errors that say what was expected.
 */
public final class SidecarConfig {

    /**
     * The defaults, written as on the command line: picocli's {@code defaultValue} needs a constant string, and the
     * builder parses the same strings, so each default is written once. Why each is what it is: SidecarCommand's
     * flag descriptions and docs/configuration.md.
     */
    public static final class Defaults {
        public static final String INBOUND = "127.0.0.1:0";
        public static final String ADMIN = "127.0.0.1:0";
        public static final String REGISTRY = "weft://127.0.0.1:7700";
        public static final String WEIGHT = "1";
        public static final String CAPACITY = "200";
        public static final String BALANCER = "p2c-peak-ewma";
        public static final String COLLABORATOR = "event-loop";
        public static final String QUEUE_SIZE = "2048";
        public static final String QUEUE_TIMEOUT = "5s";
        public static final String LEASE_TTL = "10s";
        public static final String MESH_PROTOCOL = "wmp";
        public static final String MESH_CONNECTIONS = "2";
        public static final String DRAIN_TIMEOUT = "10s";
        public static final String REQUEST_HEAD_TIMEOUT = "10s";
        public static final String IDLE_TIMEOUT = "75s";
        public static final String BODY_TIMEOUT = "60s";
        /** Zero trust by default (docs/security.md): mesh traffic only with a certificate, no plaintext inbound. */
        public static final String MTLS = "strict";

        private Defaults() {}
    }

    /** The link between sidecars. */
    public enum MeshProtocol {
        /** Weft's binary, multiplexed protocol (docs/protocol.md). */
        WMP("wmp"),
        /** Plain HTTP/1.1 keep-alive: exists to measure WMP against (docs/benchmarks.md). */
        HTTP1("http1");

        private final String label;

        MeshProtocol(String label) {
            this.label = label;
        }

        /** As written on the command line and shown in /config. */
        public String label() {
            return label;
        }

        public static MeshProtocol parse(String name) {
            return byLabel(values(), MeshProtocol::label, "mesh protocol", name);
        }
    }

    /** How exchanges are carried (docs/architecture.md, "Concurrency model"). */
    public enum CollaboratorMode {
        /** Each step's listener starts the next, on the Worker's own loop. */
        EVENT_LOOP("event-loop"),
        /** Each exchange is a virtual thread that blocks on each step. */
        VIRTUAL_THREAD("virtual-thread");

        private final String label;

        CollaboratorMode(String label) {
            this.label = label;
        }

        /** As written on the command line and shown in /config. */
        public String label() {
            return label;
        }

        /** A new Collaborator of this mode, for one sidecar. */
        public Collaborator create() {
            return Collaborator.named(label);
        }

        public static CollaboratorMode parse(String name) {
            return byLabel(values(), CollaboratorMode::label, "collaborator", name);
        }
    }

    private static MtlsMode mtlsMode(String name) {
        return byLabel(MtlsMode.values(), MtlsMode::label, "--mtls mode", name);
    }

    /** The value whose label is {@code name}; else an error naming every label, e.g. "(expected: wmp, http1)". */
    private static <E> E byLabel(E[] values, Function<E, String> label, String what, String name) {
        for (E v : values) {
            if (label.apply(v).equals(name)) {
                return v;
            }
        }
        throw new IllegalArgumentException("unknown " + what + " '" + name + "' (expected: "
                + Arrays.stream(values).map(label).collect(Collectors.joining(", ")) + ")");
    }

    private final String service;
    private final String instanceId;
    private final InetSocketAddress app;
    private final InetSocketAddress inbound;
    private final InetSocketAddress advertise;
    private final InetSocketAddress outbound;
    private final Map<String, InetSocketAddress> upstreams;
    private final InetSocketAddress admin;
    private final String registryUrl;
    private final int weight;
    private final int capacity;
    private final int queueSize;
    private final Duration queueTimeout;
    private final Duration leaseTtl;
    private final Balancer.Factory balancer;
    private final CollaboratorMode collaborator;
    private final int workers;
    private final MeshProtocol meshProtocol;
    private final int meshConnectionsPerPeer;
    private final Duration drainTimeout;
    private final ObservabilityConfig observability;
    private final ConnectionTimeouts timeouts;
    private final AppHealth.Config appHealth;
    private final Path tokenFile;
    private final MtlsMode mtls;

    private SidecarConfig(Builder b) {
        service = Objects.requireNonNull(b.service, "service");
        app = Objects.requireNonNull(b.app, "app");
        instanceId = b.instanceId;
        inbound = b.inbound;
        advertise = b.advertise;
        outbound = b.outbound;
        upstreams = Map.copyOf(b.upstreams);
        admin = b.admin;
        registryUrl = b.registryUrl;
        weight = b.weight;
        capacity = b.capacity;
        queueSize = b.queueSize;
        queueTimeout = b.queueTimeout;
        leaseTtl = b.leaseTtl;
        balancer = b.balancer;
        collaborator = b.collaborator;
        workers = b.workers;
        meshProtocol = b.meshProtocol;
        meshConnectionsPerPeer = b.meshConnectionsPerPeer;
        drainTimeout = b.drainTimeout;
        observability = b.observability;
        timeouts = b.timeouts;
        appHealth = b.appHealth;
        tokenFile = b.tokenFile;
        mtls = b.mtls;
        if (mtls == MtlsMode.STRICT && tokenFile == null) {
            // Strict is the default, so this is what a sidecar started without --mtls and a token hears.
            throw new IllegalArgumentException("--mtls strict needs --token-file (a join token from ./weft token"
                    + " create --service " + service + "): strict, the default, serves mesh traffic only with a"
                    + " certificate from the control plane (--registry weft://...), and refuses plaintext on the"
                    + " inbound port; --mtls permissive serves without one (plaintext accepted), --mtls off has no"
                    + " TLS at all");
        }
        if (mtls == MtlsMode.STRICT && meshProtocol == MeshProtocol.HTTP1) {
            throw new IllegalArgumentException("--mtls strict needs --mesh-protocol wmp: the HTTP/1.1 mesh link (kept"
                    + " to measure WMP against) is plaintext, and strict peers refuse it");
        }
        if (tokenFile != null && mtls != MtlsMode.OFF && !dev.weft.registry.weft.ControlPlaneUrl.isControlPlane(registryUrl)) {
            throw new IllegalArgumentException("--token-file needs the control plane as --registry (weft[+tls]://...):"
                    + " it is the certificate authority, and " + registryUrl + " has none (a sidecar on it runs"
                    + " --mtls permissive or off)");
        }
    }

    /** A sidecar for {@code service} beside the app at {@code app}; every other setting has its default. */
    public static Builder builder(String service, InetSocketAddress app) {
        return new Builder(service, app);
    }

    /** Name this instance registers as. */
    public String service() {
        return service;
    }

    /** Unique id of this instance within the service; null: SERVICE-HOST-PORT of the advertised address. */
    public String instanceId() {
        return instanceId;
    }

    /** The local application (inbound traffic goes there). */
    public InetSocketAddress app() {
        return app;
    }

    /** Listener for mesh traffic from peer sidecars. */
    public InetSocketAddress inbound() {
        return inbound;
    }

    /** Address peers should dial for {@link #inbound} (differs when binding 0.0.0.0); null: the bound one. */
    public InetSocketAddress advertise() {
        return advertise;
    }

    /** Shared listener routing by Host header; null for none. */
    public InetSocketAddress outbound() {
        return outbound;
    }

    /** Service name → local listener bound to that service. */
    public Map<String, InetSocketAddress> upstreams() {
        return upstreams;
    }

    /** Admin listener (/ready, /live, /config, /metrics). */
    public InetSocketAddress admin() {
        return admin;
    }

    /** {@code weft://host:port}, {@code weft+tls://host:port?ca-pin=...} or {@code etcd://...}. */
    public String registryUrl() {
        return registryUrl;
    }

    /** Registered weight. */
    public int weight() {
        return weight;
    }

    /** Most requests in flight to the app (and registered for peers to honour); 0 = unlimited. */
    public int capacity() {
        return capacity;
    }

    /** Requests allowed to wait for capacity, per destination, before 503. */
    public int queueSize() {
        return queueSize;
    }

    /** Longest wait for capacity before 503. */
    public Duration queueTimeout() {
        return queueTimeout;
    }

    /** Registration lease TTL: a killed sidecar disappears from peers within it. */
    public Duration leaseTtl() {
        return leaseTtl;
    }

    /** The balancer every destination gets: p2c-peak-ewma unless set. */
    public Balancer.Factory balancer() {
        return balancer;
    }

    public CollaboratorMode collaborator() {
        return collaborator;
    }

    /** Worker event loops. */
    public int workers() {
        return workers;
    }

    public MeshProtocol meshProtocol() {
        return meshProtocol;
    }

    /** Persistent WMP connections per peer and Worker. */
    public int meshConnectionsPerPeer() {
        return meshConnectionsPerPeer;
    }

    /** Longest a graceful drain waits for requests in flight. */
    public Duration drainTimeout() {
        return drainTimeout;
    }

    /** Metrics, tracing and access logs (docs/observability.md). */
    public ObservabilityConfig observability() {
        return observability;
    }

    /** The timeouts of every phase of a connection: request head, idle keep-alive, body progress; zero: no limit. */
    public ConnectionTimeouts timeouts() {
        return timeouts;
    }

    /** How the local app is checked; readiness and registration follow it (inbound/AppHealth). */
    public AppHealth.Config appHealth() {
        return appHealth;
    }

    /** The join token's file, read at start and when a renewal falls back to it; null: none. */
    public Path tokenFile() {
        return tokenFile;
    }

    /** The certificate and the mesh link's TLS for this sidecar (docs/security.md, "Modes"). */
    public MtlsMode mtls() {
        return mtls;
    }

    /** Sets what differs from {@link Defaults}; names are parsed as they are set. Not thread-safe. */
    public static final class Builder {
        private final String service;
        private final InetSocketAddress app;
        private String instanceId;
        private InetSocketAddress inbound = hostPort(Defaults.INBOUND);
        private InetSocketAddress advertise;
        private InetSocketAddress outbound;
        private Map<String, InetSocketAddress> upstreams = Map.of();
        private InetSocketAddress admin = hostPort(Defaults.ADMIN);
        private String registryUrl = Defaults.REGISTRY;
        private int weight = Integer.parseInt(Defaults.WEIGHT);
        private int capacity = Integer.parseInt(Defaults.CAPACITY);
        private int queueSize = Integer.parseInt(Defaults.QUEUE_SIZE);
        private Duration queueTimeout = Durations.parse(Defaults.QUEUE_TIMEOUT);
        private Duration leaseTtl = Durations.parse(Defaults.LEASE_TTL);
        private Balancer.Factory balancer = Balancer.named(Defaults.BALANCER);
        private CollaboratorMode collaborator = CollaboratorMode.parse(Defaults.COLLABORATOR);
        private int workers = Transport.defaultWorkers();
        private MeshProtocol meshProtocol = MeshProtocol.parse(Defaults.MESH_PROTOCOL);
        private int meshConnectionsPerPeer = Integer.parseInt(Defaults.MESH_CONNECTIONS);
        private Duration drainTimeout = Durations.parse(Defaults.DRAIN_TIMEOUT);
        private ObservabilityConfig observability = ObservabilityConfig.defaults();
        private ConnectionTimeouts timeouts = new ConnectionTimeouts(Durations.parse(Defaults.REQUEST_HEAD_TIMEOUT),
                Durations.parse(Defaults.IDLE_TIMEOUT), Durations.parse(Defaults.BODY_TIMEOUT));
        private AppHealth.Config appHealth = AppHealth.Config.defaults();
        private Path tokenFile;
        private MtlsMode mtls = mtlsMode(Defaults.MTLS);

        private Builder(String service, InetSocketAddress app) {
            this.service = Objects.requireNonNull(service, "service");
            this.app = Objects.requireNonNull(app, "app");
        }

        private static InetSocketAddress hostPort(String value) {
            return SidecarCommand.HostPortConverter.parse(value);
        }

        /** Null: SERVICE-HOST-PORT of the advertised address. */
        public Builder instanceId(String id) {
            instanceId = id;
            return this;
        }

        public Builder inbound(InetSocketAddress address) {
            inbound = Objects.requireNonNull(address, "inbound");
            return this;
        }

        /** Null: the address {@link #inbound} was bound to. */
        public Builder advertise(InetSocketAddress address) {
            advertise = address;
            return this;
        }

        /** Null: no shared outbound listener. */
        public Builder outbound(InetSocketAddress address) {
            outbound = address;
            return this;
        }

        public Builder upstreams(Map<String, InetSocketAddress> byService) {
            upstreams = Map.copyOf(byService);
            return this;
        }

        public Builder admin(InetSocketAddress address) {
            admin = Objects.requireNonNull(address, "admin");
            return this;
        }

        public Builder registry(String url) {
            registryUrl = Objects.requireNonNull(url, "registry");
            return this;
        }

        public Builder weight(int w) {
            weight = w;
            return this;
        }

        public Builder capacity(int c) {
            capacity = c;
            return this;
        }

        public Builder queueSize(int n) {
            queueSize = n;
            return this;
        }

        public Builder queueTimeout(Duration d) {
            queueTimeout = Objects.requireNonNull(d, "queueTimeout");
            return this;
        }

        public Builder leaseTtl(Duration d) {
            leaseTtl = Objects.requireNonNull(d, "leaseTtl");
            return this;
        }

        /** {@code p2c-peak-ewma}, {@code least-request}, {@code round-robin}, {@code weighted-round-robin} or {@code ring-hash:HEADER}. */
        public Builder balancer(String name) {
            balancer = Balancer.named(name);
            return this;
        }

        /** {@code event-loop} or {@code virtual-thread}. */
        public Builder collaborator(String name) {
            collaborator = CollaboratorMode.parse(name);
            return this;
        }

        public Builder workers(int n) {
            workers = n;
            return this;
        }

        /** {@code wmp} or {@code http1}. */
        public Builder meshProtocol(String name) {
            meshProtocol = MeshProtocol.parse(name);
            return this;
        }

        public Builder meshConnectionsPerPeer(int n) {
            meshConnectionsPerPeer = n;
            return this;
        }

        public Builder drainTimeout(Duration d) {
            drainTimeout = Objects.requireNonNull(d, "drainTimeout");
            return this;
        }

        public Builder observability(ObservabilityConfig config) {
            observability = Objects.requireNonNull(config, "observability");
            return this;
        }

        /** Zero: no limit. */
        public Builder requestHeadTimeout(Duration d) {
            timeouts = timeouts.requestHead(d);
            return this;
        }

        /** Zero: no limit. */
        public Builder idleTimeout(Duration d) {
            timeouts = timeouts.idle(d);
            return this;
        }

        /** Zero: no limit. */
        public Builder bodyTimeout(Duration d) {
            timeouts = timeouts.body(d);
            return this;
        }

        public Builder appHealth(AppHealth.Config c) {
            appHealth = Objects.requireNonNull(c, "appHealth");
            return this;
        }

        /** Null: no join token. */
        public Builder tokenFile(Path file) {
            tokenFile = file;
            return this;
        }

        /** {@code strict}, {@code permissive} or {@code off}. */
        public Builder mtls(String mode) {
            mtls = mtlsMode(mode);
            return this;
        }

        public SidecarConfig build() {
            return new SidecarConfig(this);
        }
    }
}
