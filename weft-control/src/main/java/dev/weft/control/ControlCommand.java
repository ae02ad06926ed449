package dev.weft.control;

import dev.weft.control.ca.CertificateAuthority;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code weft control}: runs the control plane until SIGTERM or SIGINT.
 *
 * <p>Prints exactly one line to stdout, {@code weft control listening on HOST:PORT}, once the port is bound;
 * scripts and tests read the port from it when {@code --listen} asks for port 0. With {@code --registry}, an
 * unreachable store at start is an error (status 1, after {@code --registry-timeout}) rather than a control plane that
 * answers 503 to everything: a supervisor restarting it is easier to read than one that looks up but is not.
 */
@Command(name = "control", mixinStandardHelpOptions = true,
        description = "Runs the control plane: the registry API sidecars register with and watch, and the span"
                + " collector. State lives in --data-dir, or in etcd with --registry etcd://...")
public final class ControlCommand implements Callable<Integer> {

    @Option(names = "--listen", defaultValue = "127.0.0.1:7700", paramLabel = "HOST:PORT",
            converter = HostPortConverter.class,
            description = "Address to serve the registry API on; port 0 picks a free one (default: ${DEFAULT-VALUE}).")
    InetSocketAddress listen;

    @Option(names = "--api-tls", defaultValue = "auto", paramLabel = "auto|on|off",
            description = "Serve the API over TLS 1.3 with a certificate from the control plane's own CA: on, off, or"
                    + " auto (default: ${DEFAULT-VALUE}): on unless --listen is a loopback address. Clients then use"
                    + " weft+tls://HOST:PORT with --control-ca or --control-ca-pin. See docs/security.md.")
    String apiTls;

    @Option(names = "--api-san", paramLabel = "NAME|IP",
            description = "Another DNS name or IP address for the API's certificate, beside the listen address,"
                    + " 127.0.0.1, ::1, localhost and the host name (repeatable).")
    java.util.List<String> apiSans = new java.util.ArrayList<>();

    @Option(names = "--data-dir", defaultValue = "./.weft/control", paramLabel = "DIR",
            description = "Where registrations and leases are kept across restarts (default: ${DEFAULT-VALUE});"
                    + " with --registry only the certificate authority's files (DIR/ca) live here.")
    Path dataDir;

    @Option(names = "--registry", paramLabel = "URL",
            description = "Keep registrations and policies in this store instead of --data-dir, e.g."
                    + " etcd://h1:2379,h2:2379,h3:2379 (same options as the sidecar's: tls, ca, cert, key, user,"
                    + " password-file, prefix). The API stays the same; spans stay in memory. Default: the embedded"
                    + " store.")
    String registry;

    @Option(names = "--registry-timeout", defaultValue = "10s", paramLabel = "DURATION",
            converter = dev.weft.control.cli.DurationConverter.class,
            description = "How long to keep trying to reach --registry at start before exiting with status 1"
                    + " (default: ${DEFAULT-VALUE}).")
    java.time.Duration registryTimeout;

    @Option(names = "--trace-store-spans", defaultValue = "" + ControlPlane.DEFAULT_TRACE_STORE_SPANS, paramLabel = "N",
            description = "Spans kept in memory for ./weft trace (Zipkin API under /api/v2); oldest traces are evicted"
                    + " first, slow and failed ones last; 0 collects none (default: ${DEFAULT-VALUE}).")
    int traceStoreSpans;

    @Option(names = "--history-interval", defaultValue = "5s", paramLabel = "DURATION",
            converter = dev.weft.control.cli.DurationConverter.class,
            description = "How often the dashboard's history (/ui/) reads every registered sidecar's /metrics; it keeps"
                    + " 720 readings (an hour at 5 s); 0s reads none, so the dashboard shows no charts"
                    + " (default: ${DEFAULT-VALUE}).")
    java.time.Duration historyInterval;

    @Option(names = "--admin-token-file", paramLabel = "FILE",
            description = "The operator token (first line of FILE, mode 0600) that apply, token create and the"
                    + " topology commands send. Default: DATA_DIR/admin.token, generated at the first start."
                    + " See docs/security.md.")
    Path adminTokenFile;

    // --- the certificate authority (docs/security.md) ---

    @Option(names = "--trust-domain", defaultValue = CertificateAuthority.DEFAULT_TRUST_DOMAIN, paramLabel = "NAME",
            description = "SPIFFE trust domain of the identities issued: spiffe://NAME/service/SERVICE"
                    + " (default: ${DEFAULT-VALUE}).")
    String trustDomain;

    @Option(names = "--cert-ttl", defaultValue = "24h", paramLabel = "DURATION",
            converter = dev.weft.control.cli.DurationConverter.class,
            description = "Lifetime of the sidecars' certificates; they renew when a third is left (default:"
                    + " ${DEFAULT-VALUE}; 10s to 30 days).")
    java.time.Duration certTtl;

    @Option(names = "--ca-cert", paramLabel = "FILE",
            description = "PEM: your root or intermediate CA certificate, then its issuers up to the root; with"
                    + " --ca-key. Default: a root generated at first start in DATA_DIR/ca (key mode 0600).")
    Path caCert;

    @Option(names = "--ca-key", paramLabel = "FILE",
            description = "PEM: the unencrypted private key of --ca-cert (PKCS#8, EC or RSA).")
    Path caKey;

    @Option(names = "--ca-overlap-roots", paramLabel = "FILE",
            description = "PEM: roots trusted beside the signing one during a root rotation; sidecars get them in"
                    + " their trust bundle, and certificates they signed may renew. See docs/security.md.")
    Path overlapRoots;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (traceStoreSpans < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --trace-store-spans "
                    + traceStoreSpans + " (expected 0 or more)");
        }
        CertificateAuthority.Settings caSettings;
        try {
            caSettings = new CertificateAuthority.Settings(trustDomain, certTtl, caCert, caKey, overlapRoots);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        ApiTls.Mode tlsMode;
        try {
            tlsMode = ApiTls.Mode.parse(apiTls);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        ControlPlane control = new ControlPlane(ControlPlane.DEFAULT_WATCH_HEARTBEAT, traceStoreSpans)
                .apiTls(tlsMode, apiSans);
        try {
            control.historyInterval(historyInterval);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --history-interval: "
                    + e.getMessage());
        }
        InetSocketAddress bound;
        try {
            ControlBackend backend = null;
            if (registry != null) {
                try {
                    backend = ControlBackendProvider.open(registry, registryTimeout);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "invalid --registry: "
                            + e.getMessage());
                }
            }
            // The CA's files stay in the data dir whatever the registry: the root's key is never written to etcd.
            CertificateAuthority ca;
            try {
                ca = CertificateAuthority.open(dataDir.resolve("ca"), caSettings);
            } catch (java.io.IOException e) {
                if (backend != null) {
                    backend.close();
                }
                throw e;
            }
            control.authority(ca);
            spec.commandLine().getErr().println("weft control: " + ca.describe());
            // Like the CA's key, the operator token stays in the data dir whatever the registry; never logged.
            dev.weft.control.ca.AdminToken admin;
            try {
                admin = adminTokenFile != null ? dev.weft.control.ca.AdminToken.read(adminTokenFile)
                        : dev.weft.control.ca.AdminToken.inDataDir(dataDir);
            } catch (java.io.IOException e) {
                if (backend != null) {
                    backend.close();
                }
                ca.close();
                throw e;
            }
            control.adminToken(admin);
            spec.commandLine().getErr().println("weft control: " + admin.describe());
            try {
                bound = backend == null ? control.start(listen, dataDir) : control.start(listen, backend);
            } catch (IllegalArgumentException e) {   // an --api-san that is no name or address
                ca.close();
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            describeTls(control, ca, tlsMode, bound, spec.commandLine().getErr());
        } catch (java.io.IOException e) {
            spec.commandLine().getErr().println("weft control: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // The JVM runs shutdown hooks on SIGTERM/SIGINT; closing here lets in-flight writes finish and frees the port.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            control.close();
            stopped.countDown();
        }, "weft-control-shutdown"));
        PrintWriter out = spec.commandLine().getOut();
        out.println("weft control listening on " + format(bound));
        out.flush();
        stopped.await();
        return 0;
    }

    /** What clients need to know of the API's transport, and the loud line of plain HTTP off loopback. */
    private void describeTls(ControlPlane control, CertificateAuthority ca, ApiTls.Mode mode, InetSocketAddress bound,
                             PrintWriter err) {
        ApiTls tls = control.apiTls();
        if (tls != null) {
            err.println("weft control: " + tls.describe());
            err.println("weft control: clients use weft+tls://HOST:PORT with --control-ca " + (caCert == null
                    ? dataDir.resolve("ca").resolve("root.pem") : "ROOT.pem (the root of " + caCert + ")")
                    + " (or GET /v1/trust-bundle) or --control-ca-pin " + ca.rootPin());
        } else if (!ApiTls.loopback(listen)) {
            err.println("weft control: WARNING: --api-tls " + mode.name().toLowerCase(java.util.Locale.ROOT)
                    + " on " + format(bound) + ", which is not a loopback address: the operator token, join tokens"
                    + " and every answer cross the network in clear text, readable and replayable by anyone on the"
                    + " path. Use --api-tls on (the default, auto, does so off loopback).");
        }
        err.flush();
    }

    static String format(InetSocketAddress address) {
        String host = address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    /** Parses HOST:PORT (IPv6 in brackets) without resolving names the user did not ask to resolve yet. */
    static final class HostPortConverter implements CommandLine.ITypeConverter<InetSocketAddress> {
        @Override
        public InetSocketAddress convert(String value) {
            int colon = value.lastIndexOf(':');
            if (colon <= 0 || colon == value.length() - 1) {
                throw new CommandLine.TypeConversionException("invalid address '" + value
                        + "' (expected HOST:PORT, e.g. 127.0.0.1:7700 or [::1]:7700)");
            }
            String host = value.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 0 || port > 65535) {
                throw new CommandLine.TypeConversionException("invalid port in '" + value
                        + "' (expected 0-65535; 0 picks a free port)");
            }
            return new InetSocketAddress(host, port);
        }
    }
}
