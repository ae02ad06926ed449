package dev.weft.dataplane.inbound;

import dev.weft.registry.support.Durations;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * Whether the local app can serve, checked actively: the sidecar's readiness and its registration follow it, so
 * that callers stop sending to an instance whose app stopped answering, before their own requests fail there
 * (passive outlier detection at the callers only reacts to failures they have already had).
 *
 * <p>A check is a TCP connect to the app, or with {@code --app-health PATH} an HTTP/1.1 {@code GET PATH} on a
 * connection of its own, healthy on a 2xx or 3xx status within the interval (also each check's timeout). The state changes only after
 * {@link Config#unhealthyThreshold} failures in a row (down) or {@link Config#healthyThreshold} successes in a row
 * (up), as Envoy's and Kubernetes' health checks do, so that one slow answer does not take an instance out.
 *
 * <p>Threads: {@link #check} on the sidecar's readiness thread (a virtual thread: the check blocks); the state and
 * counters are read by admin requests on Workers.
 */
public final class AppHealth {
    /** How the app is checked. */
    public record Config(String path, Duration interval, int unhealthyThreshold, int healthyThreshold) {
        public static final String DEFAULT_INTERVAL = "1s";
        public static final String DEFAULT_UNHEALTHY = "3";
        public static final String DEFAULT_HEALTHY = "1";

        public Config {
            if (path != null && !validPath(path)) {
                throw new IllegalArgumentException("--app-health '" + path + "' is not an origin-form path (expected"
                        + " e.g. /health: '/' then visible ASCII, no spaces)");
            }
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("app health interval must be a positive duration");
            }
            if (unhealthyThreshold < 1 || healthyThreshold < 1) {
                throw new IllegalArgumentException("app health thresholds must be at least 1");
            }
        }

        public static Config defaults() {
            return new Config(null, Durations.parse(DEFAULT_INTERVAL), Integer.parseInt(DEFAULT_UNHEALTHY),
                    Integer.parseInt(DEFAULT_HEALTHY));
        }

        /** For /config and messages. */
        public String describe() {
            return (path == null ? "TCP connect" : "GET " + path) + " every " + Durations.format(interval)
                    + ", down after " + unhealthyThreshold + " failure(s), up after " + healthyThreshold
                    + " success(es)";
        }

        private static boolean validPath(String p) {
            if (p.isEmpty() || p.charAt(0) != '/' || p.length() > 1024) {
                return false;
            }
            for (int i = 0; i < p.length(); i++) {
                char c = p.charAt(i);
                if (c <= ' ' || c >= 0x7f) {
                    return false;
                }
            }
            return true;
        }
    }

    private final InetSocketAddress app;
    private final Config config;
    private final LongAdder passed = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private volatile boolean healthy;
    private volatile String lastFailure = "not checked yet";
    private int streak;
    private boolean everHealthy;

    public AppHealth(InetSocketAddress app, Config config) {
        this.app = app;
        this.config = config;
    }

    public Config config() {
        return config;
    }

    /**
     * Checks once and returns whether the state changed. The first success after start makes it healthy at once,
     * whatever the threshold: a fresh sidecar should not wait to register an app that answers. Called by one
     * thread at a time (the streak is that thread's).
     */
    public boolean check() {
        String failure = probe();
        if (failure == null) {
            passed.increment();
            streak = healthy ? 0 : streak + 1;
            if (!healthy && (streak >= config.healthyThreshold() || !everHealthy)) {
                healthy = true;
                everHealthy = true;
                streak = 0;
                return true;
            }
            return false;
        }
        failed.increment();
        lastFailure = failure;
        streak = healthy ? streak + 1 : 0;
        if (healthy && streak >= config.unhealthyThreshold()) {
            healthy = false;
            streak = 0;
            return true;
        }
        return false;
    }

    public boolean isHealthy() {
        return healthy;
    }

    /** Why the last failed check failed, for /ready's answer. */
    public String lastFailure() {
        return lastFailure;
    }

    public long checksPassed() {
        return passed.sum();
    }

    public long checksFailed() {
        return failed.sum();
    }

    /** Null when healthy, else what went wrong. */
    private String probe() {
        int timeoutMs = (int) Math.max(1, config.interval().toMillis());
        try (Socket s = new Socket()) {
            s.connect(app, timeoutMs);
            if (config.path() == null) {
                return null;
            }
            s.setSoTimeout(timeoutMs);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + config.path() + " HTTP/1.1\r\nHost: " + app.getHostString() + ":" + app.getPort()
                    + "\r\nUser-Agent: weft-health-check\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            int status = readStatus(s.getInputStream());
            return status >= 200 && status < 400 ? null : "GET " + config.path() + " answered " + status;
        } catch (IOException e) {
            return (config.path() == null ? "connect" : "GET " + config.path()) + " failed: " + e.getMessage();
        }
    }

    /** The status of {@code HTTP/1.x NNN ...}; -1 for anything else. Reads no more than the status line needs. */
    private static int readStatus(InputStream in) throws IOException {
        byte[] line = new byte[12];
        int n = 0;
        while (n < line.length) {
            int r = in.read(line, n, line.length - n);
            if (r < 0) {
                break;
            }
            n += r;
        }
        String s = new String(line, 0, n, StandardCharsets.US_ASCII);
        if (n < 12 || !s.startsWith("HTTP/1.") || s.charAt(8) != ' ') {
            return -1;
        }
        try {
            return Integer.parseInt(s.substring(9, 12));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
