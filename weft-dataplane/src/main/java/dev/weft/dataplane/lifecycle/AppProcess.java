package dev.weft.dataplane.lifecycle;

import dev.weft.dataplane.Sidecar;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The app as a child of its sidecar ({@code weft sidecar ... -- APP ARGS}): one lifecycle for both, so that the app
 * never starts before its proxy, the proxy never exits before the app has drained, and a job's sidecar ends when
 * the job does (the problems of istio#11130, istio#7136 and linkerd2#1869).
 *
 * <ol>
 *   <li>The sidecar is started first; the app is started once its listeners are bound, so its first outbound call
 *       has somewhere to go. It is told where through the environment: {@code WEFT_ADMIN},
 *       {@code WEFT_OUTBOUND} and one {@code WEFT_UPSTREAM_<NAME>} per {@code --upstream}, each {@code HOST:PORT}.</li>
 *   <li>The sidecar registers once the app answers its health check, as always.</li>
 *   <li>On SIGTERM or SIGINT (the JVM's shutdown hook): {@link Sidecar#drain(Runnable)} deregisters, stops
 *       accepting inbound, waits for inbound requests in flight, then stops the app (SIGTERM, SIGKILL after the
 *       drain timeout), then closes the outbound side; the process exits with the app's exit code.</li>
 *   <li>When the app exits by itself, the sidecar drains and exits too, with the app's exit code.</li>
 * </ol>
 *
 * <p>Threads: {@link #run} on the command's main thread, which waits for the app; the drain runs either there (the
 * app exited) or on the shutdown hook's thread (a signal), never both: {@link #stopping} decides.
 */
public final class AppProcess {
    private final List<String> command;
    private final Sidecar sidecar;
    private final Duration stopTimeout;
    private final PrintStream log;
    private final AtomicBoolean stopping = new AtomicBoolean();

    /** @param stopTimeout how long the app has to exit after SIGTERM before it is killed */
    public AppProcess(List<String> command, Sidecar sidecar, Duration stopTimeout, PrintStream log) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no app command after --");
        }
        this.command = List.copyOf(command);
        this.sidecar = sidecar;
        this.stopTimeout = stopTimeout;
        this.log = log;
    }

    /** Where the sidecar listens, for the app's environment: {@code WEFT_ADMIN=127.0.0.1:9900} and so on. */
    public static Map<String, String> environment(Map<String, InetSocketAddress> bound) {
        TreeMap<String, String> env = new TreeMap<>();
        bound.forEach((listener, address) -> {
            String hostPort = address.getHostString() + ":" + address.getPort();
            if (listener.equals("admin") || listener.equals("outbound")) {
                env.put("WEFT_" + listener.toUpperCase(Locale.ROOT), hostPort);
            } else if (listener.startsWith("upstream ")) {
                String name = listener.substring("upstream ".length()).toUpperCase(Locale.ROOT)
                        .replaceAll("[^A-Z0-9]", "_");
                env.put("WEFT_UPSTREAM_" + name, hostPort);
            }
        });
        return env;
    }

    /**
     * Starts the app and returns its exit code once both have stopped. Returns only when the app exited by itself;
     * on a signal the shutdown hook drains and halts the JVM with the app's code instead.
     */
    public int run() throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().putAll(environment(sidecar.boundAddresses()));
        Process app;
        try {
            app = pb.start();
        } catch (IOException e) {
            log.println("weft sidecar: cannot start the app " + command + ": " + e.getMessage());
            sidecar.drain(() -> { });
            throw e;
        }
        log.println("weft sidecar: started the app (pid " + app.pid() + "): " + String.join(" ", command));
        Thread hook = new Thread(() -> {
            if (!stopping.compareAndSet(false, true)) {
                return; // the app exited by itself and the main thread is draining; System.exit follows
            }
            log.println("weft sidecar: signal: draining, then stopping the app");
            sidecar.drain(() -> stop(app));
            int code = exitCode(app);
            log.println("weft sidecar: the app exited with " + code + "; exiting with it");
            log.flush();
            // halt, not exit: exit from a shutdown hook blocks, and the JVM's own status for a signal is 128+N.
            Runtime.getRuntime().halt(code);
        }, "weft-drain");
        Runtime.getRuntime().addShutdownHook(hook);

        int code = app.waitFor();
        if (!stopping.compareAndSet(false, true)) {
            // A signal arrived: the hook drains and halts the JVM with the app's code; nothing more to do here.
            Thread.currentThread().join();
        }
        log.println("weft sidecar: the app exited with " + code + "; draining");
        sidecar.drain(() -> { });
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the JVM is already exiting: the hook sees stopping set and returns
        }
        return code;
    }

    /** SIGTERM, and SIGKILL if the app has not exited within the stop timeout. */
    private void stop(Process app) {
        if (!app.isAlive()) {
            return;
        }
        app.destroy();
        try {
            if (!app.waitFor(stopTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                log.println("weft sidecar: the app did not exit within " + stopTimeout.toMillis() + " ms of SIGTERM;"
                        + " killing it");
                app.destroyForcibly();
                app.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int exitCode(Process app) {
        try {
            return app.waitFor(5, TimeUnit.SECONDS) ? app.exitValue() : 137;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 137;
        }
    }
}
