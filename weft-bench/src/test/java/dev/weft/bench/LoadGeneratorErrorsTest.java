package dev.weft.bench;

import com.sun.net.httpserver.HttpServer;
import dev.weft.examples.HostPort;
import dev.weft.examples.ProviderServer;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class LoadGeneratorErrorsTest {
    private static LoadGenerator.Settings shortRun(URI url) {
        return LoadGenerator.Settings.of(url).withConnections(8).withThreads(1)
                .withDuration(Duration.ofSeconds(1)).withProgress(null);
    }

    private static void assertConsistent(LoadResult result) {
        assertThat(result.requests()).isEqualTo(result.successes() + result.errors().total());
        assertThat(result.latency().samples()).isEqualTo(result.successes());
    }

    @Test
    void countsTheProvidersBackPressureAsStatus503() throws Exception {
        try (ProviderServer provider = ProviderServer.start(new ProviderServer.Settings(
                new HostPort("127.0.0.1", 0), "tiny", 2, Duration.ofMillis(50), 1))) {
            LoadResult result = LoadGenerator.run(shortRun(URI.create("http://" + HostPort.of(provider.address()))));

            assertThat(result.errors().byStatus()).containsOnlyKeys(503);
            assertThat(result.errors().byStatus().get(503)).isPositive();
            assertThat(result.errors().byOrigin()).as("the provider named itself in x-provider")
                    .containsOnlyKeys("503 provider tiny");
            assertThat(result.errors().byOrigin().get("503 provider tiny")).isEqualTo(result.errors().byStatus().get(503));
            assertThat(result.successes()).isPositive();
            assertThat(result.errors().wrongBody() + result.errors().connection() + result.errors().timeout()).isZero();
            assertThat(result.errors().describe()).startsWith("status 503: ");
            assertConsistent(result);
        }
    }

    @Test
    void countsAnswersWithTheWrongHashAsWrongBody() throws Exception {
        HttpServer liar = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        liar.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] body = "42".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        liar.start();
        try {
            LoadResult result = LoadGenerator.run(shortRun(
                    URI.create("http://127.0.0.1:" + liar.getAddress().getPort() + "/")));

            assertThat(result.errors().wrongBody()).isPositive();
            assertThat(result.successes()).isZero();
            assertThat(result.errors().byStatus()).isEmpty();
            assertThat(result.qps()).isZero();
            assertConsistent(result);
        } finally {
            liar.stop(0);
        }
    }

    @Test
    void countsRefusedConnectionsAsConnectionErrors() throws Exception {
        // Held for the run: a port picked and closed could be taken by another bind (or one of the run's own dials).
        try (HeldPort dead = LoopbackPorts.held()) {
            LoadResult result = LoadGenerator.run(shortRun(URI.create("http://127.0.0.1:" + dead.port() + "/")));

            assertThat(result.errors().connection()).isPositive();
            assertThat(result.successes()).isZero();
            assertConsistent(result);
        }
    }

    @Test
    void countsRequestsWithoutAnAnswerAsTimeouts() throws Exception {
        // The kernel completes the handshakes from the backlog; nobody ever reads or answers.
        try (ServerSocket silent = new ServerSocket(0, 64, InetAddress.getLoopbackAddress())) {
            LoadResult result = LoadGenerator.run(shortRun(URI.create("http://127.0.0.1:" + silent.getLocalPort()))
                    .withTimeout(Duration.ofMillis(200)));

            assertThat(result.errors().timeout()).isPositive();
            assertThat(result.successes()).isZero();
            assertConsistent(result);
        }
    }
}
