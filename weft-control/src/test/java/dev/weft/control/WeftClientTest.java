package dev.weft.control;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What the weft:// client does on the wire, seen from the control plane's side (/v1/health and /v1/leases). */
class WeftClientTest {
    @TempDir
    Path dataDir;
    private ControlPlane control;
    private Registry registry;
    private int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    @BeforeEach
    void start() throws Exception {
        control = new ControlPlane();
        port = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir).getPort();
        registry = Registries.open("weft://127.0.0.1:" + port, Operator.credentials(dataDir));
    }

    @AfterEach
    void stop() {
        registry.close();
        control.close();
        http.close();
    }

    private JsonNode health() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/health"))
                .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
        return ControlJson.MAPPER.readTree(r.body());
    }

    @Test
    void watches_of_one_service_share_a_stream_that_closes_with_the_last_watch() throws Exception {
        Watch first = registry.watch("provider", (s, e) -> {});
        Watch second = registry.watch("provider", (s, e) -> {});
        await().atMost(Duration.ofSeconds(5)).until(() -> health().get("watchers").asInt() == 1);

        first.close();
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(1))
                .until(() -> health().get("watchers").asInt() == 1);
        second.close();

        await().atMost(Duration.ofSeconds(5)).until(() -> health().get("watchers").asInt() == 0);
    }

    @Test
    void closing_a_registration_revokes_its_lease_at_once() throws Exception {
        Registration registration = registry.register(
                new Endpoint("provider", "p1", "127.0.0.1", 7001, 1, 0, Map.of()), Duration.ofSeconds(30));
        assertThat(registration.awaitRegistered(Duration.ofSeconds(5))).isTrue();
        assertThat(health().get("leases").asInt()).isEqualTo(1);

        registration.close();

        // close() waited for the answer, so there is nothing to wait for here.
        assertThat(health().get("leases").asInt()).isZero();
    }

    @Test
    void closing_the_registry_leaves_the_registration_to_expire_with_its_lease() throws Exception {
        Registration registration = registry.register(
                new Endpoint("provider", "p1", "127.0.0.1", 7001, 1, 0, Map.of()), Duration.ofMillis(600));
        assertThat(registration.awaitRegistered(Duration.ofSeconds(5))).isTrue();

        registry.close();

        assertThat(health().get("leases").asInt()).isEqualTo(1);
        await().atMost(Duration.ofMillis(600 + 1000)).until(() -> health().get("leases").asInt() == 0);
    }
}
