package dev.weft.dataplane;

import dev.weft.dataplane.inbound.AppHealth;
import dev.weft.dataplane.lifecycle.AppProcess;
import dev.weft.registry.support.StartupTrace;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.ObservabilityConfig;
import dev.weft.dataplane.observe.RouteTable;
import dev.weft.dataplane.security.IdentityException;
import io.netty.util.ResourceLeakDetector;
import dev.weft.registry.support.Durations;
import dev.weft.registry.cli.ControlTrustOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code ./weft sidecar}: runs one sidecar beside a service instance until SIGTERM, then drains. */
@Command(name = "sidecar", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Runs a Weft sidecar next to one instance of a service.",
                "Outbound: the app calls a local --upstream port bound to a service, or --outbound with a Host header.",
                "Inbound: mesh traffic from peer sidecars is forwarded to --app, never more than --capacity at once.",
                "The mesh link is mTLS by default (--mtls strict): give the service's join token with --token-file.",
                "SIGTERM drains: deregister, stop accepting, finish in-flight requests (up to --drain-timeout), exit."})
public final class SidecarCommand implements Callable<Integer> {

    @Option(names = "--service", paramLabel = "NAME", required = true, description = "Service name this instance registers as, e.g. provider.")
    String service;

    @Option(names = "--app", required = true, converter = HostPortConverter.class, paramLabel = "HOST:PORT",
            description = "HOST:PORT of the local application (HTTP/1.1).")
    InetSocketAddress app;

    @Option(names = "--inbound", converter = HostPortConverter.class, paramLabel = "HOST:PORT", defaultValue = SidecarConfig.Defaults.INBOUND,
            description = "HOST:PORT for mesh traffic from peer sidecars (default: ${DEFAULT-VALUE}, any free port).")
    InetSocketAddress inbound;

    @Option(names = "--advertise", converter = HostPortConverter.class, paramLabel = "HOST:PORT",
            description = "HOST:PORT peers should dial, when it differs from --inbound (e.g. binding 0.0.0.0).")
    InetSocketAddress advertise;

    @Option(names = "--upstream", paramLabel = "NAME=HOST:PORT",
            description = "Repeatable. A local listener bound to one upstream service, e.g. provider=127.0.0.1:19000.")
    Map<String, String> upstreams = new LinkedHashMap<>();

    @Option(names = "--outbound", converter = HostPortConverter.class, paramLabel = "HOST:PORT",
            description = "HOST:PORT of a shared listener that routes by the Host header (Host: provider).")
    InetSocketAddress outbound;

    @Option(names = "--registry", paramLabel = "URL", defaultValue = SidecarConfig.Defaults.REGISTRY,
            description = "Registry URL: weft://HOST:PORT (embedded control plane), weft+tls://HOST:PORT (a control plane serving TLS, with --control-ca or --control-ca-pin) or etcd://H1:2379,... (default: ${DEFAULT-VALUE}).")
    String registry;

    // --control-ca and --control-ca-pin, worded as for every command that talks to the control plane.
    @Mixin
    ControlTrustOptions controlTrust = new ControlTrustOptions();

    @Option(names = "--id", paramLabel = "ID", description = "Instance id, unique within the service (default: SERVICE-HOST-PORT of --inbound).")
    String id;

    @Option(names = "--weight", paramLabel = "N", defaultValue = SidecarConfig.Defaults.WEIGHT, description = "Relative share of traffic for weighted balancing (default: ${DEFAULT-VALUE}).")
    int weight;

    @Option(names = "--capacity", paramLabel = "N", defaultValue = SidecarConfig.Defaults.CAPACITY,
            description = "Most requests in flight to the app; peers honour it too (default: ${DEFAULT-VALUE}; 0 = unlimited).")
    int capacity;

    @Parameters(paramLabel = "APP", arity = "0..*",
            description = "After --: the app's command line. The sidecar starts it once its listeners are bound (with WEFT_ADMIN, WEFT_OUTBOUND and WEFT_UPSTREAM_<NAME> in its environment), drains and stops it on SIGTERM/SIGINT, and exits with its exit code; when the app exits by itself, so does the sidecar.")
    List<String> appCommand = List.of();

    @Option(names = "--app-health", paramLabel = "PATH",
            description = "Check the app with GET PATH (2xx/3xx = healthy) instead of a TCP connect; readiness and the registration follow the check (default: TCP connect).")
    String appHealthPath;

    @Option(names = "--app-health-interval", defaultValue = AppHealth.Config.DEFAULT_INTERVAL, converter = DurationConverter.class, paramLabel = "DURATION",
            description = "How often the app is checked, and each check's timeout (default: ${DEFAULT-VALUE}).")
    Duration appHealthInterval;

    @Option(names = "--app-health-unhealthy", defaultValue = AppHealth.Config.DEFAULT_UNHEALTHY, paramLabel = "N",
            description = "Failed checks in a row that take the instance out: /ready 503 and deregistered (default: ${DEFAULT-VALUE}).")
    int appUnhealthyThreshold;

    @Option(names = "--app-health-healthy", defaultValue = AppHealth.Config.DEFAULT_HEALTHY, paramLabel = "N",
            description = "Passed checks in a row that bring it back (default: ${DEFAULT-VALUE}).")
    int appHealthyThreshold;

    @Option(names = "--admin", converter = HostPortConverter.class, paramLabel = "HOST:PORT", defaultValue = SidecarConfig.Defaults.ADMIN,
            description = "HOST:PORT of the admin listener: /ready /live /config /metrics (default: ${DEFAULT-VALUE}).")
    InetSocketAddress admin;

    @Option(names = "--balancer", paramLabel = "NAME", defaultValue = SidecarConfig.Defaults.BALANCER,
            description = "p2c-peak-ewma (latency and load aware), least-request, round-robin, weighted-round-robin, "
                    + "or ring-hash:HEADER (consistent hashing on a header) (default: ${DEFAULT-VALUE}).")
    String balancer;

    @Option(names = "--collaborator", paramLabel = "MODE", defaultValue = SidecarConfig.Defaults.COLLABORATOR,
            description = "How exchanges are carried: event-loop (continuations on the Worker) or virtual-thread (default: ${DEFAULT-VALUE}).")
    String collaborator;

    @Option(names = "--workers", paramLabel = "N",
            description = "Worker event loops (default: 2, or fewer when the process may use fewer CPUs: its cgroup CPU quota, rounded up, or the CPUs available).")
    Integer workers;

    @Option(names = "--queue-size", paramLabel = "N", defaultValue = SidecarConfig.Defaults.QUEUE_SIZE,
            description = "Requests that may wait for capacity per destination before 503 (default: ${DEFAULT-VALUE}).")
    int queueSize;

    @Option(names = "--queue-timeout", defaultValue = SidecarConfig.Defaults.QUEUE_TIMEOUT, converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Longest wait for capacity before 503 (default: ${DEFAULT-VALUE}).")
    Duration queueTimeout;

    @Option(names = "--lease-ttl", defaultValue = SidecarConfig.Defaults.LEASE_TTL, converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Registration lease TTL; a killed sidecar leaves peers' view within it (default: ${DEFAULT-VALUE}).")
    Duration leaseTtl;

    @Option(names = "--mesh-protocol", paramLabel = "PROTOCOL", defaultValue = SidecarConfig.Defaults.MESH_PROTOCOL,
            description = "Link to peer sidecars: wmp (binary, multiplexed) or http1 (plain HTTP/1.1 keep-alive, for comparison) (default: ${DEFAULT-VALUE}).")
    String meshProtocol;

    @Option(names = "--mesh-connections", paramLabel = "N", defaultValue = SidecarConfig.Defaults.MESH_CONNECTIONS,
            description = "Persistent WMP connections per peer and Worker (default: ${DEFAULT-VALUE}).")
    int meshConnections;

    @Option(names = "--drain-timeout", defaultValue = SidecarConfig.Defaults.DRAIN_TIMEOUT, converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Longest a graceful drain waits for in-flight requests (default: ${DEFAULT-VALUE}).")
    Duration drainTimeout;

    @Option(names = "--request-head-timeout", defaultValue = SidecarConfig.Defaults.REQUEST_HEAD_TIMEOUT, converter = DurationOrOffConverter.class,
            paramLabel = "DURATION",
            description = "Longest a client may take to send a request head once its first byte arrived; then 408 and close (slow-loris clients) (default: ${DEFAULT-VALUE}; 0 = no limit).")
    Duration requestHeadTimeout;

    @Option(names = "--idle-timeout", defaultValue = SidecarConfig.Defaults.IDLE_TIMEOUT, converter = DurationOrOffConverter.class,
            paramLabel = "DURATION",
            description = "Longest a client connection to an HTTP/1.1 listener may wait for its next request; then it is closed, quietly (nginx's keepalive_timeout) (default: ${DEFAULT-VALUE}; 0 = no limit).")
    Duration idleTimeout;

    @Option(names = "--body-timeout", defaultValue = SidecarConfig.Defaults.BODY_TIMEOUT, converter = DurationOrOffConverter.class,
            paramLabel = "DURATION",
            description = "Longest a body may go without a byte: a client's request body (then 408 and close) or an app's answer body (then the answer is cut) (default: ${DEFAULT-VALUE}; 0 = no limit).")
    Duration bodyTimeout;

    // --- observability (docs/observability.md) ---

    @Option(names = "--metrics", paramLabel = "on|off", defaultValue = "on",
            description = "Per-route golden metrics and the mesh's own cost (mesh tax) at /metrics (default: ${DEFAULT-VALUE}). The per-direction basics are always counted.")
    String metricsFlag;

    @Option(names = "--tracing", paramLabel = "on|off", defaultValue = "on",
            description = "Trace context propagation (W3C traceparent, B3) and spans; off passes trace headers through untouched (default: ${DEFAULT-VALUE}).")
    String tracingFlag;

    @Option(names = "--trace-sample", paramLabel = "RATIO", defaultValue = "0.01",
            description = "Share of new traces sampled beyond the reservoir, 0.0-1.0; a mesh peer's decision is always honoured, an app's or client's 'sampled' only within the reservoir (default: ${DEFAULT-VALUE}).")
    double traceSample;

    @Option(names = "--trace-reservoir", paramLabel = "N/s", defaultValue = "200/s",
            description = "New traces a second always sampled before --trace-sample applies, shared with the callers' 'sampled' decisions; also the failed, unsampled exchanges a second exported alone; 0/s for none (default: ${DEFAULT-VALUE}).")
    String traceReservoir;

    @Option(names = "--trace-endpoint", paramLabel = "URL|auto|off", defaultValue = "auto",
            description = "Where spans are posted: a Zipkin (http://HOST:9411/api/v2/spans) or OTLP/HTTP (http://HOST:4318/v1/traces) URL; auto = the control plane of a weft:// registry (default: ${DEFAULT-VALUE}).")
    String traceEndpoint;

    @Option(names = "--trace-format", paramLabel = "FORMAT", defaultValue = "zipkin",
            description = "Span encoding: zipkin (v2 JSON) or otlp (OTLP/HTTP JSON) (default: ${DEFAULT-VALUE}).")
    String traceFormat;

    @Option(names = "--trace-propagation", paramLabel = "FORMATS", defaultValue = "w3c", split = ",",
            description = "Trace header formats written on every forwarded request: w3c, b3 (single header), b3multi (X-B3-*); all are read, and a format a request arrived with is always written back (default: ${DEFAULT-VALUE}).")
    List<String> tracePropagation;

    @Option(names = "--access-log", paramLabel = "[SIDE=]SINK",
            description = "Repeatable. JSON-lines access log: SINK is stdout, a file path or off; SIDE is inbound or outbound (both when omitted). Lines are dropped and counted, never waited for, when the sink is slow.")
    List<String> accessLogs = new ArrayList<>();

    @Option(names = "--route-label", paramLabel = "NAME=[METHOD:]PREFIX",
            description = "Repeatable. Names a path prefix as a route for metric labels and span names, e.g. users=/users or create=POST:/users; other paths are route 'default' (paths are never labels).")
    List<String> routeLabels = new ArrayList<>();

    // --- identity (docs/security.md) ---

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "A join token for this service (./weft token create --service NAME > FILE): the sidecar shows it to the control plane (the CA) for its certificate, made for a key that never leaves the process, and registers with it until it holds one (with --mtls off, always). Registering needs it, or a certificate: see docs/security.md.")
    java.nio.file.Path tokenFile;

    @Option(names = "--mtls", paramLabel = "MODE", defaultValue = SidecarConfig.Defaults.MTLS,
            description = "strict (the default: no serving without a valid certificate, so it needs --token-file and a weft:// registry; the mesh link is mTLS only, plaintext on the inbound port is refused and counted), permissive (a certificate when there is a --token-file; mTLS to every peer while it holds one, plaintext accepted) or off (no certificate, no TLS, said loudly at start) (default: ${DEFAULT-VALUE}).")
    String mtls;

    /** The observability flags as a config; errors name the flag and the expected form. */
    ObservabilityConfig observabilityConfig() {
        Set<ObservabilityConfig.Propagation> formats = EnumSet.noneOf(ObservabilityConfig.Propagation.class);
        for (String f : tracePropagation) {
            if (!f.isBlank()) {
                formats.add(ObservabilityConfig.Propagation.parse(f));
            }
        }
        Map<ExchangeObserver.Direction, String> logs = new EnumMap<>(ExchangeObserver.Direction.class);
        for (String spec : accessLogs) {
            String side = null;
            String sink = spec;
            int eq = spec.indexOf('=');
            if (eq > 0) {
                side = spec.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                sink = spec.substring(eq + 1).trim();
            }
            if (sink.isEmpty()) {
                throw new IllegalArgumentException("invalid --access-log '" + spec + "' (expected [inbound=|outbound=]SINK with SINK stdout, off or a file path)");
            }
            List<ExchangeObserver.Direction> sides = side == null ? List.of(ExchangeObserver.Direction.values())
                    : switch (side) {
                        case "inbound" -> List.of(ExchangeObserver.Direction.INBOUND);
                        case "outbound" -> List.of(ExchangeObserver.Direction.OUTBOUND);
                        default -> throw new IllegalArgumentException("invalid side '" + side + "' in --access-log '"
                                + spec + "' (expected inbound or outbound)");
                    };
            for (ExchangeObserver.Direction d : sides) {
                if (sink.equals("off")) {
                    logs.remove(d);
                } else {
                    logs.put(d, sink);
                }
            }
        }
        List<RouteTable.Route> routes = new ArrayList<>();
        for (String r : routeLabels) {
            routes.add(RouteTable.Route.parse(r));
        }
        return new ObservabilityConfig(onOff("--metrics", metricsFlag), onOff("--tracing", tracingFlag), traceSample,
                perSecond("--trace-reservoir", traceReservoir), traceEndpoint.trim(), traceFormat.trim().toLowerCase(Locale.ROOT), formats, logs, routes);
    }

    @Spec
    CommandSpec spec;

    /** The flags as a config. */
    SidecarConfig config() {
        Map<String, InetSocketAddress> ups = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : upstreams.entrySet()) {
            ups.put(e.getKey(), HostPortConverter.parse(e.getValue()));
        }
        // With --inbound on port 0 the default id would not be unique; the sidecar then derives it from the bound port.
        String instance = id != null ? id : inbound.getPort() == 0 ? null : service + "-" + inbound.getHostString() + "-" + inbound.getPort();
        SidecarConfig.Builder b = SidecarConfig.builder(service, app)
                .instanceId(instance).inbound(inbound).advertise(advertise).outbound(outbound).upstreams(ups)
                .admin(admin).registry(controlTrust.withTrust(registry)).weight(weight).capacity(capacity).queueSize(queueSize)
                .queueTimeout(queueTimeout).leaseTtl(leaseTtl).balancer(balancer).collaborator(collaborator)
                .meshProtocol(meshProtocol).meshConnectionsPerPeer(meshConnections).drainTimeout(drainTimeout)
                .observability(observabilityConfig()).requestHeadTimeout(requestHeadTimeout)
                .idleTimeout(idleTimeout).bodyTimeout(bodyTimeout)
                .appHealth(new AppHealth.Config(appHealthPath, appHealthInterval, appUnhealthyThreshold,
                        appHealthyThreshold));
        if (workers != null) {
            b.workers(workers);
        }
        b.tokenFile(tokenFile).mtls(mtls);
        return b.build();
    }

    /** Bad flags are usage errors: picocli prints the message and the usage, exit code 2. */
    private SidecarConfig checkedConfig() {
        try {
            return config();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    private static boolean onOff(String flag, String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "on", "true", "yes" -> true;
            case "off", "false", "no" -> false;
            default -> throw new IllegalArgumentException("invalid " + flag + " '" + value + "' (expected on or off)");
        };
    }

    /** "N/s" (or a bare N) as N, N a whole number from 0. */
    static int perSecond(String flag, String value) {
        String v = value.trim();
        String n = v.endsWith("/s") ? v.substring(0, v.length() - 2).trim() : v;
        try {
            int parsed = Integer.parseInt(n);
            if (parsed >= 0) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("invalid " + flag + " '" + value + "' (expected N/s, N a whole number >= 0,"
                + " e.g. 200/s)");
    }

    /**
     * Netty's default leak detector samples one buffer in 128 and records a stack trace for it: on a proxy that
     * allocates several buffers per request, that is a stack walk every few dozen requests, measured at about 3,000
     * per 20 s in the hot-path profile. Every test runs at the paranoid level (and fails on a leak), so a sidecar
     * turns sampling off unless the operator asked for a level ({@code -Dio.netty.leakDetection.level=simple} in
     * WEFT_JAVA_OPTS brings it back).
     */
    static void quietLeakDetection() {
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
    }

    @Override
    public Integer call() throws Exception {
        StartupTrace.mark("flags parsed");
        quietLeakDetection();
        Sidecar sidecar = new Sidecar(checkedConfig());
        Map<String, InetSocketAddress> bound;
        try {
            bound = sidecar.start();
        } catch (IdentityException e) {
            // Not a stack trace: the reason is the whole message, and what to do about it is in it.
            System.err.println("weft sidecar '" + service + "': " + e.getMessage());
            sidecar.close();
            return 1;
        }
        StringBuilder line = new StringBuilder("weft sidecar '" + service + "' started:");
        bound.forEach((k, v) -> line.append(' ').append(k).append('=').append(v.getHostString()).append(':').append(v.getPort()));
        System.out.println(line);
        System.out.flush();
        if (!appCommand.isEmpty()) {
            return new AppProcess(appCommand, sidecar, drainTimeout, System.out).run();
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("weft sidecar '" + service + "' draining");
            sidecar.drain();
            stopped.countDown();
        }, "weft-drain"));
        stopped.await();
        return 0;
    }

    /** Parses HOST:PORT with a message that says what was expected. */
    public static final class HostPortConverter implements ITypeConverter<InetSocketAddress> {
        @Override
        public InetSocketAddress convert(String value) {
            return parse(value);
        }

        static InetSocketAddress parse(String value) {
            int colon = value.lastIndexOf(':');
            if (colon <= 0 || colon == value.length() - 1) {
                throw new IllegalArgumentException("invalid address '" + value + "' (expected HOST:PORT, e.g. 127.0.0.1:19000)");
            }
            String host = value.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("invalid port in '" + value + "' (expected a number 0-65535)");
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port out of range in '" + value + "' (expected 0-65535)");
            }
            return new InetSocketAddress(host, port);
        }
    }

    /** A {@link DurationConverter} that also takes a bare {@code 0}: no limit (a zero needs no unit to be clear). */
    public static final class DurationOrOffConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String v) {
            return v.strip().equals("0") ? Duration.ZERO : Durations.parse(v);
        }
    }

    /** picocli's side of {@link Durations}, the parser every Weft command and policy document uses. */
    public static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String v) {
            return Durations.parse(v);
        }
    }
}
