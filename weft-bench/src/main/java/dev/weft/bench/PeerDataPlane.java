package dev.weft.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A proxy a user could pick instead of Weft, in both roles of the mesh: nginx, HAProxy or Caddy from the system's
 * packages, each started in the foreground as a child process with its own configuration file (rendered from the
 * template in {@code resources/peers/NAME/}) on the experiment's own ports. Nothing of the system's own service
 * (port 80, /etc) is touched.
 *
 * @param threads each proxy's threads: nginx's {@code worker_processes}, HAProxy's {@code nbthread}, Caddy's
 *                {@code GOMAXPROCS}; {@link #OWN_DEFAULT_THREADS} for the peer's default (one per CPU for all three)
 * @param tls     mutual TLS 1.3 on the link between the two roles ({@code haproxy-tls}, {@code nginx-tls}): the
 *                provider side terminates TLS and requires a client certificate, the consumer side dials TLS with its
 *                own certificate and verifies the provider side's, both against a throwaway CA of the run
 *                ({@link PeerCertificates}); its pooled keep-alive connections make one handshake each, not one per
 *                request. The consumer side's listener and the provider side's connections to its app stay plain
 *                HTTP, as with Weft's sidecars
 */
public record PeerDataPlane(Peer peer, int threads, boolean tls) implements DataPlane {

    /** What a plane name with this suffix adds to its peer: TLS between the two roles. */
    static final String TLS_SUFFIX = "-tls";

    /** Idle upstream connections each proxy may keep (nginx: per worker): enough for 512 connections in flight. */
    static final int KEEPALIVE_POOL = 512;

    /** The peers, with what each needs to run. */
    public enum Peer {
        NGINX("nginx", "nginx", "nginx/proxy.conf", List.of("nginx", "-v")),
        HAPROXY("haproxy", "haproxy", "haproxy/proxy.cfg", List.of("haproxy", "-v")),
        CADDY("caddy", "caddy", "caddy/Caddyfile", List.of("caddy", "version"));

        private final String binary;
        private final String aptPackage;
        private final String template;
        private final List<String> versionCommand;

        Peer(String binary, String aptPackage, String template, List<String> versionCommand) {
            this.binary = binary;
            this.aptPackage = aptPackage;
            this.template = template;
            this.versionCommand = versionCommand;
        }

        public String binary() {
            return binary;
        }

        public String aptPackage() {
            return aptPackage;
        }

        /** The name used on the command line and in tables. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Peer named(String name) {
            for (Peer p : values()) {
                if (p.label().equals(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown peer '" + name + "' (expected nginx, haproxy or caddy)");
        }
    }

    public PeerDataPlane(Peer peer) {
        this(peer, OWN_DEFAULT_THREADS, false);
    }

    /** The plane a name stands for: a peer's label ({@code nginx}), or it with {@link #TLS_SUFFIX}. */
    public static PeerDataPlane named(String name) {
        boolean tls = name.endsWith(TLS_SUFFIX) && !name.equals(TLS_SUFFIX);
        Peer peer = Peer.named(tls ? name.substring(0, name.length() - TLS_SUFFIX.length()) : name);
        if (tls && peer == Peer.CADDY) {
            throw new IllegalArgumentException("no TLS variant of caddy (expected haproxy-tls or nginx-tls)");
        }
        return new PeerDataPlane(peer, OWN_DEFAULT_THREADS, tls);
    }

    @Override
    public String name() {
        return peer.label() + (tls ? TLS_SUFFIX : "");
    }

    @Override
    public PeerDataPlane withThreads(int n) {
        return new PeerDataPlane(peer, n, tls);
    }

    @Override
    public String description() {
        String settings = switch (peer) {
            case NGINX -> "weighted round robin (weight=), max_conns per upstream (502 when all are full), "
                    + "keepalive " + KEEPALIVE_POOL + " per worker, worker_processes " + (threads > 0 ? threads : "auto");
            case HAPROXY -> "balance roundrobin with weights, maxconn per server (excess waits in its queue), "
                    + "http-reuse always, nbthread " + (threads > 0 ? threads : "= CPUs (its default)");
            case CADDY -> "lb_policy round_robin (2.6 has no weighted policy: 1:1:1), max_conns_per_host and "
                    + "unhealthy_request_count per upstream (one value for all: the largest capacity), keepalive "
                    + "pools, GOMAXPROCS " + (threads > 0 ? threads : "= CPUs (Go's default)");
        };
        String link = !tls ? "" : switch (peer) {
            case HAPROXY -> "; mutual TLS 1.3 on the link: bind ssl crt ca-file verify required on the provider side,"
                    + " server ssl verify required ca-file crt on the consumer side, EC P-256 from a throwaway CA";
            default -> "; mutual TLS 1.3 on the link: ssl_verify_client on on the provider side, proxy_ssl_certificate,"
                    + " proxy_ssl_verify on and proxy_ssl_session_reuse on on the consumer side, EC P-256 from a"
                    + " throwaway CA";
        };
        return version(peer) + "; " + settings + link;
    }

    @Override
    public Proxy startProviderSide(Context ctx, Upstream provider) throws ExperimentException, InterruptedException {
        return start(ctx, name() + "-provider-" + provider.name(), ctx.pickPort(), List.of(provider), true);
    }

    @Override
    public Proxy startConsumerSide(Context ctx, int listenPort, int appPort, List<Upstream> upstreams)
            throws ExperimentException, InterruptedException {
        return start(ctx, name() + "-consumer", listenPort, upstreams, false);
    }

    /** @param providerSide the role: the provider side accepts the link, the consumer side dials it */
    private Proxy start(Context ctx, String name, int listenPort, List<Upstream> upstreams, boolean providerSide)
            throws ExperimentException, InterruptedException {
        Path config = ctx.runDir().resolve(name + "-" + Path.of(peer.template).getFileName());
        try {
            Map<String, String> link = tls ? tlsSettings(peer, PeerCertificates.issue(ctx.runDir(), name),
                    providerSide) : PLAIN_LINK;
            Files.writeString(config, render(template(peer), ctx.runDir(), name, listenPort, upstreams, threads, link),
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ExperimentException("cannot write " + config + ": " + e.getMessage(), e);
        }
        ChildProcess process = ctx.launch(name, command(config, ctx.runDir()), environment(ctx.runDir()),
                List.of(listenPort));
        Duration ready = process.awaitListening(listenPort, ctx.startTimeout());
        ctx.say(name + " ready in " + ready.toMillis() + " ms on " + Experiment.LOOPBACK + ":" + listenPort
                + " (pid " + process.pid() + ", config " + config + ")");
        return new Proxy(name, process.pid(), listenPort, ready, 0);
    }

    /** The foreground command line: the proxy stays our child, and SIGTERM stops it. */
    private List<String> command(Path config, Path runDir) {
        return switch (peer) {
            // -p: relative paths under the run directory; -e: the log before the configuration is read.
            case NGINX -> List.of("nginx", "-p", runDir.toString(), "-e", "stderr", "-c", config.toString());
            case HAPROXY -> List.of("haproxy", "-db", "-f", config.toString());
            case CADDY -> List.of("caddy", "run", "--adapter", "caddyfile", "--config", config.toString());
        };
    }

    /**
     * Caddy writes its state under HOME/XDG dirs; point those into the run directory, not the user's home. Its
     * threads are Go's: GOMAXPROCS.
     */
    private Map<String, String> environment(Path runDir) {
        if (peer != Peer.CADDY) {
            return Map.of();
        }
        Map<String, String> env = new LinkedHashMap<>();
        if (threads > 0) {
            env.put("GOMAXPROCS", Integer.toString(threads));
        }
        env.put("HOME", runDir.toString());
        env.put("XDG_DATA_HOME", runDir.resolve("caddy-data").toString());
        env.put("XDG_CONFIG_HOME", runDir.resolve("caddy-config").toString());
        return env;
    }

    static String template(Peer peer) {
        String resource = "/peers/" + peer.template;
        try (InputStream in = PeerDataPlane.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource + " in weft-bench");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read resource " + resource, e);
        }
    }

    /** The template variables of the link between the two roles: empty for plain HTTP. */
    static final Map<String, String> PLAIN_LINK = Map.of("listen_tls", "", "server_tls", "", "proxy_tls", "",
            "upstream_scheme", "http");

    /**
     * The link's template variables for one proxy with TLS: the provider side's listener terminates mutual TLS
     * ({@code listen_tls}, {@code server_tls}: nginx's server block), the consumer side's upstream connections dial
     * it ({@code proxy_tls}: HAProxy's server lines, nginx's location; {@code upstream_scheme}).
     */
    static Map<String, String> tlsSettings(Peer peer, PeerCertificates.Issued certs, boolean providerSide) {
        Map<String, String> v = new LinkedHashMap<>(PLAIN_LINK);
        switch (peer) {
            case HAPROXY -> {
                if (providerSide) {
                    v.put("listen_tls", " ssl crt " + certs.combined() + " ca-file " + certs.ca()
                            + " verify required ssl-min-ver TLSv1.3");
                } else {
                    v.put("proxy_tls", " ssl verify required ca-file " + certs.ca() + " crt " + certs.combined()
                            + " ssl-min-ver TLSv1.3");
                }
            }
            case NGINX -> {
                if (providerSide) {
                    v.put("listen_tls", " ssl");
                    v.put("server_tls", String.join("\n",
                            "        ssl_certificate " + certs.cert() + ";",
                            "        ssl_certificate_key " + certs.key() + ";",
                            "        ssl_client_certificate " + certs.ca() + ";",
                            "        ssl_verify_client on;",
                            "        ssl_protocols TLSv1.3;"));
                } else {
                    v.put("upstream_scheme", "https");
                    v.put("proxy_tls", String.join("\n",
                            "            proxy_ssl_certificate " + certs.cert() + ";",
                            "            proxy_ssl_certificate_key " + certs.key() + ";",
                            "            proxy_ssl_trusted_certificate " + certs.ca() + ";",
                            "            proxy_ssl_verify on;",
                            "            proxy_ssl_name " + PeerCertificates.NAME + ";",
                            "            proxy_ssl_session_reuse on;",
                            "            proxy_ssl_protocols TLSv1.3;"));
                }
            }
            case CADDY -> throw new IllegalStateException("no TLS variant of caddy");
        }
        return v;
    }

    private static final Pattern SECTION = Pattern.compile("\\{\\{#servers}}(.*?)\\{\\{/servers}}", Pattern.DOTALL);
    private static final Pattern VARIABLE = Pattern.compile("\\{\\{(\\w+)}}");

    /** {@link #render(String, Path, String, int, List, int, Map)} for a plain HTTP link. */
    static String render(String template, Path runDir, String name, int listenPort, List<Upstream> upstreams,
                         int threads) {
        return render(template, runDir, name, listenPort, upstreams, threads, PLAIN_LINK);
    }

    /**
     * Fills a template: {@code {{#servers}}…{{/servers}}} is repeated once per upstream (with {@code port},
     * {@code weight}, {@code max_conns}, {@code server_name}), then the other {@code {{variables}}} are replaced.
     * An unknown variable is an error, so a typo in a template fails the run instead of producing a broken proxy.
     *
     * @param threads the proxy's threads, {@link #OWN_DEFAULT_THREADS} for its default
     * @param link    the link's variables: {@link #PLAIN_LINK} or {@link #tlsSettings}
     */
    static String render(String template, Path runDir, String name, int listenPort, List<Upstream> upstreams,
                         int threads, Map<String, String> link) {
        Matcher section = SECTION.matcher(template);
        StringBuilder expanded = new StringBuilder();
        while (section.find()) {
            StringBuilder repeated = new StringBuilder();
            for (Upstream u : upstreams) {
                repeated.append(substitute(section.group(1), Map.of("port", Integer.toString(u.port()),
                        "weight", Integer.toString(u.weight()), "max_conns", Integer.toString(u.capacity()),
                        "server_name", u.name(), "proxy_tls", link.get("proxy_tls"))));
            }
            section.appendReplacement(expanded, Matcher.quoteReplacement(repeated.toString()));
        }
        section.appendTail(expanded);
        Map<String, String> values = new LinkedHashMap<>(link);
        values.putAll(Map.of(
                "run_dir", runDir.toString(),
                "name", name,
                "listen_port", Integer.toString(listenPort),
                "keepalive", Integer.toString(KEEPALIVE_POOL),
                // One limit for the whole proxy where the peer has no per-upstream setting (Caddy): the largest, so
                // no upstream gets less than its capacity (a provider-side Caddy has one upstream, its own).
                "max_conns", Integer.toString(upstreams.stream().mapToInt(Upstream::capacity).max().orElse(0)),
                "worker_processes", threads > 0 ? Integer.toString(threads) : "auto",
                "nbthread", threads > 0 ? "nbthread " + threads : "# nbthread not set: one thread per CPU"));
        return substitute(expanded.toString(), values);
    }

    private static String substitute(String text, Map<String, String> values) {
        Matcher m = VARIABLE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = values.get(m.group(1));
            if (value == null) {
                throw new IllegalStateException("unknown template variable {{" + m.group(1) + "}} (known: "
                        + String.join(", ", values.keySet()) + ")");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** {@code nginx/1.22.1}, {@code HAProxy version 2.6.12…}, {@code v2.6.2}: the peer's own first version line. */
    static String version(Peer peer) {
        try {
            Process p = new ProcessBuilder(peer.versionCommand).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor(10, TimeUnit.SECONDS);
            String first = out.lines().findFirst().orElse("").replace("nginx version: ", "");
            if (first.length() > 60) {
                first = first.substring(0, 60);
            }
            return peer == Peer.CADDY ? "Caddy " + first : first;
        } catch (IOException e) {
            return peer.label() + " (not installed)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return peer.label();
        }
    }

    /** The peers that are not on the PATH, in the order given. */
    static List<Peer> missing(List<Peer> peers) {
        List<Peer> missing = new ArrayList<>();
        for (Peer p : peers) {
            if (!onPath(p.binary)) {
                missing.add(p);
            }
        }
        return missing;
    }

    static boolean onPath(String binary) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, binary))) {
                return true;
            }
        }
        return false;
    }
}
