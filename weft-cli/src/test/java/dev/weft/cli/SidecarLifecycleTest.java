package dev.weft.cli;

import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code weft sidecar ... -- APP}: the sidecar runs its app as a child, as real processes. A job's sidecar exits
 * when the job does, with its exit code; a served app starts after the sidecar, is reachable through the mesh, and
 * on SIGTERM the sidecar drains, stops the app and exits with the app's code, leaving no process behind. The app
 * here is the JDK's own {@code jwebserver}. The tests share one control plane (each registers a service of its own).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SidecarLifecycleTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** The control plane's process, its data dir ({@code dir/control}, where tokens are made) and registry URL. */
    private final List<ChildJvm> controlPlane = new ArrayList<>();
    private Path dir;
    private String registry;

    @BeforeAll
    void startTheControlPlane(@TempDir Path dir) throws Exception {
        this.dir = dir;
        registry = control(dir, controlPlane);
    }

    @AfterAll
    void stopTheControlPlane() throws Exception {
        closeAll(controlPlane);
    }

    private static String control(Path dir, List<ChildJvm> children) throws IOException, InterruptedException {
        ChildJvm control = ChildJvm.start("control", dir, "control", "--listen", "127.0.0.1:0", "--data-dir",
                dir.resolve("control").toString());
        children.add(control);
        return "weft://127.0.0.1:" + control.awaitLine("listening on [^:]+:(\\d+)", WAIT);
    }

    private static void closeAll(List<ChildJvm> children) throws Exception {
        for (int i = children.size() - 1; i >= 0; i--) {
            children.get(i).close();
        }
    }

    @Test
    void aJobsSidecarExitsWhenTheJobDoesWithItsExitCode() throws Exception {
        List<ChildJvm> children = new ArrayList<>();
        // Held until the test ends: the sidecar binds its upstream port all the same (Netty allows address reuse),
        // and nothing else can be given either port before.
        try (HeldPort upstreamPort = LoopbackPorts.held(); HeldPort appPort = LoopbackPorts.held()) {
            int upstream = upstreamPort.port();
            ChildJvm sidecar = ChildJvm.start("sidecar-job", dir, "sidecar", "--service", "job", "--app",
                    "127.0.0.1:" + appPort.port(), "--registry", registry, "--upstream", "provider=127.0.0.1:" + upstream,
                    "--token-file", ChildJvm.tokenFile(dir, registry, "job").toString(),
                    "--", "sh", "-c", "echo \"job calls provider at $WEFT_UPSTREAM_PROVIDER, args $*\"; sleep 1; exit 3",
                    "job", "--weight", "5");
            children.add(sidecar);
            assertThat(sidecar.awaitExit(WAIT)).as("the sidecar's exit code: the job's").isEqualTo(3);
            // Flags after -- are the app's, not the sidecar's; the app learns its upstream from the environment.
            assertThat(sidecar.tail()).contains("started the app")
                    .contains("job calls provider at 127.0.0.1:" + upstream + ", args --weight 5")
                    .contains("the app exited with 3");
        } finally {
            closeAll(children);
        }
    }

    @Test
    void onSigtermTheSidecarDrainsStopsItsAppAndExitsWithTheAppsCode() throws Exception {
        List<ChildJvm> children = new ArrayList<>();
        Path site = Files.createDirectories(dir.resolve("site"));
        Files.writeString(site.resolve("hello.txt"), "hello from the app\n");
        String jwebserver = Path.of(System.getProperty("java.home"), "bin", "jwebserver").toString();
        // The app's port must be named before the app starts: held until the test ends, jwebserver binds it all the
        // same (the JDK allows address reuse) and nothing else can be given it before. The sidecar's own listeners
        // bind port 0 (its defaults) and it prints where.
        try (HeldPort app = LoopbackPorts.held()) {
            int appPort = app.port();
            ChildJvm sidecar = ChildJvm.start("sidecar-app", dir, "sidecar", "--service", "site", "--app",
                    "127.0.0.1:" + appPort, "--registry", registry,
                    "--token-file", ChildJvm.tokenFile(dir, registry, "site").toString(),
                    "--app-health", "/hello.txt", "--",
                    jwebserver, "-b", "127.0.0.1", "-p", String.valueOf(appPort), "-d", site.toString());
            children.add(sidecar);
            int adminPort = Integer.parseInt(sidecar.awaitLine("started:.* admin=[^:]+:(\\d+)", WAIT));

            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            long deadline = System.nanoTime() + WAIT.toNanos();
            int ready = 0;
            while (ready != 200 && System.nanoTime() < deadline) {
                try {
                    ready = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/ready"))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
                } catch (IOException notYet) {
                    ready = 0;
                }
                if (ready != 200) {
                    Thread.sleep(100);
                }
            }
            assertThat(ready).as("/ready once the child app answers").isEqualTo(200);
            List<ProcessHandle> apps = sidecar.children();
            assertThat(apps).as("the app runs as the sidecar's child").hasSize(1);

            sidecar.sigterm();
            int code = sidecar.awaitExit(WAIT);
            // jwebserver exits on SIGTERM through the JVM's default handling: 143 (128 + 15).
            assertThat(code).as("the sidecar's exit code: the app's").isEqualTo(143);
            assertThat(apps.getFirst().isAlive()).as("the app is stopped with its sidecar").isFalse();
            assertThat(sidecar.tail()).contains("signal: draining, then stopping the app")
                    .contains("the app exited with 143");
        } finally {
            closeAll(children);
        }
    }
}
