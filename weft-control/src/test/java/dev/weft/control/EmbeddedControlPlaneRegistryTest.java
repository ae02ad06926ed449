package dev.weft.control;

import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The registry contract against the embedded control plane, reached through {@code weft://} like the data plane does. */
class EmbeddedControlPlaneRegistryTest extends RegistryContractTest {

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
