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
 */
public record PeerDataPlane(Peer peer, int threads) implements DataPlane {

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
        this(peer, OWN_DEFAULT_THREADS);
    }

    @Override
    public String name() {
        return peer.label();
    }

    @Override
    public PeerDataPlane withThreads(int n) {
        return new PeerDataPlane(peer, n);
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
        return version(peer) + "; " + settings;
    }

    @Override
    public Proxy startProviderSide(Context ctx, Upstream provider) throws ExperimentException, InterruptedException {
        return start(ctx, peer.label() + "-provider-" + provider.name(), ctx.pickPort(), List.of(provider));
    }

    @Override
    public Proxy startConsumerSide(Context ctx, int listenPort, int appPort, List<Upstream> upstreams)
            throws ExperimentException, InterruptedException {
        return start(ctx, peer.label() + "-consumer", listenPort, upstreams);
    }

    private Proxy start(Context ctx, String name, int listenPort, List<Upstream> upstreams)
            throws ExperimentException, InterruptedException {
        Path config = ctx.runDir().resolve(name + "-" + Path.of(peer.template).getFileName());
        try {
            Files.writeString(config, render(template(peer), ctx.runDir(), name, listenPort, upstreams, threads),
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

    private static final Pattern SECTION = Pattern.compile("\\{\\{#servers}}(.*?)\\{\\{/servers}}", Pattern.DOTALL);
    private static final Pattern VARIABLE = Pattern.compile("\\{\\{(\\w+)}}");

    /**
     * Fills a template: {@code {{#servers}}…{{/servers}}} is repeated once per upstream (with {@code port},
     * {@code weight}, {@code max_conns}, {@code server_name}), then the other {@code {{variables}}} are replaced.
     * An unknown variable is an error, so a typo in a template fails the run instead of producing a broken proxy.
     *
     * @param threads the proxy's threads, {@link #OWN_DEFAULT_THREADS} for its default
     */
    static String render(String template, Path runDir, String name, int listenPort, List<Upstream> upstreams,
                         int threads) {
        Matcher section = SECTION.matcher(template);
        StringBuilder expanded = new StringBuilder();
        while (section.find()) {
            StringBuilder repeated = new StringBuilder();
            for (Upstream u : upstreams) {
                repeated.append(substitute(section.group(1), Map.of("port", Integer.toString(u.port()),
                        "weight", Integer.toString(u.weight()), "max_conns", Integer.toString(u.capacity()),
                        "server_name", u.name())));
            }
            section.appendReplacement(expanded, Matcher.quoteReplacement(repeated.toString()));
        }
        section.appendTail(expanded);
        Map<String, String> values = Map.of(
                "run_dir", runDir.toString(),
                "name", name,
                "listen_port", Integer.toString(listenPort),
                "keepalive", Integer.toString(KEEPALIVE_POOL),
                // One limit for the whole proxy where the peer has no per-upstream setting (Caddy): the largest, so
                // no upstream gets less than its capacity (a provider-side Caddy has one upstream, its own).
                "max_conns", Integer.toString(upstreams.stream().mapToInt(Upstream::capacity).max().orElse(0)),
                "worker_processes", threads > 0 ? Integer.toString(threads) : "auto",
                "nbthread", threads > 0 ? "nbthread " + threads : "# nbthread not set: one thread per CPU");
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
