package dev.weft.control;

import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The registry contract against the embedded control plane, reached through {@code weft://} like the data plane does. */
class EmbeddedControlPlaneRegistryTest extends RegistryContractTest {

    /**
     * A lease taken as the sidecar starts ({@link Registry#prepareRegistration}) carries no endpoint, so callers see
     * nothing, and the registration binds its endpoint to that lease: one call where it took two.
     */
    @Test
    void theRegistrationBindsTheLeaseTakenAhead() throws Exception {
        EmbeddedBackend b = (EmbeddedBackend) backend;
        Registry c = client();
        String ahead = leaseTakenAhead(c, b);

        registered(c.register(endpoint("ahead", "a1", 7001), TTL));
        List<JsonNode> leases = b.leases();
        assertThat(leases).hasSize(1);
        assertThat(leases.getFirst().get("id").asText()).isEqualTo(ahead);
        assertThat(leases.getFirst().get("endpoints")).hasSize(1);
    }

    /**
     * One taken ahead longer ago than a third of its TTL is given back and the registration takes its own, so the
     * lease it renews has all of its TTL ahead of it.
     */
    @Test
    void aLeaseTakenAheadTooLongAgoIsGivenBack() throws Exception {
        EmbeddedBackend b = (EmbeddedBackend) backend;
        Registry c = client();
        String ahead = leaseTakenAhead(c, b);
        Thread.sleep(TTL.toMillis() / 3 + 200); // the app answers late: the lease is no longer fresh

        registered(c.register(endpoint("late", "l1", 7002), TTL));
        List<JsonNode> leases = await().atMost(Duration.ofSeconds(10)).until(b::leases,
                l -> l.size() == 1 && !l.getFirst().get("id").asText().equals(ahead));
        assertThat(leases.getFirst().get("endpoints")).hasSize(1);
    }

    /** Prepares {@code c}'s registration and returns the lease it took, once the control plane holds it, bare. */
    private static String leaseTakenAhead(Registry c, EmbeddedBackend b) throws Exception {
        c.prepareRegistration(TTL);
        List<JsonNode> leases = await().atMost(Duration.ofSeconds(10)).until(b::leases, l -> l.size() == 1);
        assertThat(leases.getFirst().get("endpoints")).isEmpty(); // nothing for callers to see yet
        return leases.getFirst().get("id").asText();
    }

    @Override
    protected Backend startBackend(Path dataDir) throws Exception {
        return new EmbeddedBackend(dataDir);
    }

    static final class EmbeddedBackend implements Backend {
        private final Path dataDir;
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        private ControlPlane control;
        /**
         * The control plane's port, held until the backend closes: stopped, the control plane frees it, and any bind
         * to port 0 or reconnecting client could otherwise be given it before {@link #restart}. The control plane binds
         * it all the same (its listener allows address reuse).
         */
        private final HeldPort held = LoopbackPorts.held();
        private final int port = held.port();

        EmbeddedBackend(Path dataDir) throws Exception {
            this.dataDir = dataDir;
            this.control = new ControlPlane();
            control.start(new InetSocketAddress("127.0.0.1", port), dataDir);
        }

        @Override
        public Registry newClient() {
            // The operator's token: these clients register endpoints of every service the suite makes up.
            return Registries.open("weft://127.0.0.1:" + port, Operator.credentials(dataDir));
        }

        @Override
        public void stop() {
            control.close();
        }

        @Override
        public void restart() throws Exception {
            control = new ControlPlane();
            control.start(new InetSocketAddress("127.0.0.1", port), dataDir);
        }

        /** Revokes every lease through the public API, as an operator would. */
        @Override
        public void loseAllLeases() throws Exception {
            String leases = get("/v1/leases");
            var tree = ControlJson.MAPPER.readTree(leases).get("leases");
            for (var lease : tree) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri("/v1/leases/" + lease.get("id").asText()))
                        .timeout(Duration.ofSeconds(2)).header("Authorization", Operator.header(dataDir))
                        .DELETE().build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
        }

        /** Every lease the control plane holds, as {@code GET /v1/leases} lists them. */
        List<JsonNode> leases() throws Exception {
            List<JsonNode> all = new ArrayList<>();
            ControlJson.MAPPER.readTree(get("/v1/leases")).get("leases").forEach(all::add);
            return all;
        }

        private String get(String path) throws Exception {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return r.body();
        }

        private URI uri(String path) {
            return URI.create("http://127.0.0.1:" + port + path);
        }

        @Override
        public void close() {
            control.close();
            http.close();
            try {
                held.close();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }
}
