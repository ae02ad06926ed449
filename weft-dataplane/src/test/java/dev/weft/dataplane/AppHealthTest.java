package dev.weft.dataplane;

import dev.weft.dataplane.inbound.AppHealth;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Readiness and registration follow the app (issue 15): when a provider's app fails its health check, its sidecar
 * answers /ready 503 saying why and leaves the registry, so the consumer's sidecar stops sending there; when the app
 * answers again it comes back. Real sidecars, a real control plane and real apps on loopback.
 */
class AppHealthTest {
    private static final Duration INTERVAL = Duration.ofMillis(100);
    private MeshFixture mesh;
    private TestApp sick;
    private TestApp well;
    private TestApp consumerApp;
    private Sidecar sickSidecar;
    private Sidecar consumer;

    /** The provider's endpoints as the registry lists them now, by id. */
    private final AtomicReference<List<String>> providerIds = new AtomicReference<>(List.of());
    private Registry watcher;

    private List<String> registered() {
        return providerIds.get();
    }

    @BeforeEach
    void start() throws Exception {
        mesh = new MeshFixture("event-loop");
        mesh.appHealth = new AppHealth.Config("/echo", INTERVAL, 2, 1);
        sick = new TestApp();
        well = new TestApp();
        consumerApp = new TestApp();
        sickSidecar = mesh.provider("provider", "p-sick", sick.address(), 1, 100);
        mesh.provider("provider", "p-well", well.address(), 1, 100);
        consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
        watcher = Registries.open(mesh.registryUrl());
        watcher.watch("provider", (service, endpoints) ->
                providerIds.set(endpoints.stream().map(Endpoint::id).sorted().toList()));
    }

    @AfterEach
    void stop() throws Exception {
        watcher.close();
        mesh.close();
        sick.close();
        well.close();
        consumerApp.close();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 10 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private static int status(int port, String path) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
        c.setConnectTimeout(5_000);
        c.setReadTimeout(5_000);
        try {
            return c.getResponseCode();
        } finally {
            c.disconnect();
        }
    }

    private static String readyText(Sidecar s) throws IOException {
        return adminText(s, "/ready");
    }

    private static String adminText(Sidecar s, String path) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + MeshFixture.port(s, "admin")
                + path).toURL().openConnection();
        c.setReadTimeout(5_000);
        try (var in = c.getResponseCode() < 400 ? c.getInputStream() : c.getErrorStream()) {
            return new String(in.readAllBytes());
        } finally {
            c.disconnect();
        }
    }

    /** The target of the test's requests: the health checks are GET /echo, so an app counts these apart. */
    private static final String CALL = "/echo?through-the-mesh";

    /** Sends n requests through the consumer's sidecar; returns how many were answered 200. */
    private int callProvider(int n) throws Exception {
        int ok = 0;
        int port = MeshFixture.port(consumer, "upstream provider");
        for (int i = 0; i < n; i++) {
            if (status(port, CALL) == 200) {
                ok++;
            }
        }
        return ok;
    }

    @Test
    void anAppFailingItsHealthCheckIsTakenOutAndBroughtBackWhenItAnswersAgain() throws Exception {
        await("both providers serving", () -> {
            try {
                callProvider(10);
            } catch (Exception e) {
                return false;
            }
            return calls(sick) > 0 && calls(well) > 0;
        });

        assertThat(adminText(sickSidecar, "/config"))
                .contains("\"appHealth\" : \"GET /echo every 100ms, down after 2 failure(s), up after 1 success(es)\"")
                .contains("\"connectionTimeouts\"").contains("\"idleMillis\" : 75000");

        sick.forcedStatus = 503;
        await("the sick app's sidecar not ready", () -> !sickSidecar.isReady());
        await("p-sick gone from the registry", () -> !registered().contains("p-sick"));
        assertThat(registered()).containsExactly("p-well");
        assertThat(readyText(sickSidecar)).contains("not healthy").contains("GET /echo answered 503");
        // Once the consumer's sidecar has the registry's update (pushed within a second): nothing more there.
        await("p-sick gone from the consumer's endpoints", () -> {
            try {
                return !adminText(consumer, "/metrics")
                        .contains("weft_endpoint_in_flight{upstream=\"provider\",endpoint=\"p-sick\"}");
            } catch (IOException e) {
                return false;
            }
        });
        int sickBefore = calls(sick);
        assertThat(callProvider(20)).as("every request answered by the healthy instance").isEqualTo(20);
        assertThat(calls(sick) - sickBefore).as("requests that reached the sick app, health checks aside").isZero();

        sick.forcedStatus = 0;
        await("the app's sidecar ready again", sickSidecar::isReady);
        await("p-sick registered again", () -> registered().contains("p-sick"));
        int sickAgain = calls(sick);
        await("traffic reaching the recovered app again", () -> {
            try {
                callProvider(10);
            } catch (Exception e) {
                return false;
            }
            return calls(sick) > sickAgain;
        });
    }

    /**
     * The test's requests that reached an app, counted on arrival by their own target. Not served minus health
     * checks: the two are counted one after the other, so a check finishing between the reads made that one off.
     */
    private static int calls(TestApp app) {
        return app.arrivals("GET " + CALL);
    }

    @Test
    void withoutAPathTheCheckIsATcpConnectAndFailuresNeedTheThreshold() throws Exception {
        // Once the listener is closed the port refuses, and stays held: closed and free, it could be taken by any
        // bind to port 0 and answer the checks that must fail.
        try (HeldPort port = LoopbackPorts.held()) {
            AppHealth h = new AppHealth(new InetSocketAddress("127.0.0.1", port.port()),
                    new AppHealth.Config(null, INTERVAL, 3, 2));
            try (ServerSocket s = port.listen()) {
                assertThat(h.check()).as("the first answer makes it healthy at once").isTrue();
                assertThat(h.isHealthy()).isTrue();
            }
            assertThat(h.check()).isFalse();
            assertThat(h.check()).isFalse();
            assertThat(h.isHealthy()).as("two failures, threshold three").isTrue();
            assertThat(h.check()).isTrue();
            assertThat(h.isHealthy()).isFalse();
            assertThat(h.lastFailure()).startsWith("connect failed");
            assertThat(h.checksFailed()).isEqualTo(3);
        }
    }

    @Test
    void aHealthPathThatIsNotAnOriginFormPathIsRefused() {
        for (String bad : new String[] {"health", "/a b", "/x\r\nHost: evil", "http://evil/"}) {
            assertThatThrownBy(
                    () -> new AppHealth.Config(bad, INTERVAL, 1, 1))
                    .as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
