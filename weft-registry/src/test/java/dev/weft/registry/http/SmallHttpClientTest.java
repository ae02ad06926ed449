package dev.weft.registry.http;

import com.sun.net.httpserver.HttpServer;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The small client against the JDK's HTTP server on an ephemeral port. */
class SmallHttpClientTest {
    private HttpServer server;
    private SmallHttpClient client;
    private final Set<String> remotePeers = ConcurrentHashMap.newKeySet();
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/echo", exchange -> {
            remotePeers.add(exchange.getRemoteAddress().toString());
            byte[] body = (exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                    + new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)
                    + " " + exchange.getRequestHeaders().getFirst("Content-Type")).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(201, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.createContext("/slow", exchange -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.close();
        });
        server.createContext("/lines", exchange -> {
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write("first\nsec".getBytes(StandardCharsets.UTF_8));
                out.flush();
                out.write("ond\r\n\nlast".getBytes(StandardCharsets.UTF_8));
            }
        });
        server.createContext("/refuse", exchange -> {
            byte[] body = "{\"error\":\"no\"}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(404, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        client = new SmallHttpClient("test", Duration.ofSeconds(2), null);
    }

    @AfterEach
    void stop() {
        release.countDown();
        client.close();
        server.stop(0);
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    @Test
    void aCallSendsMethodPathHeadersAndBodyAndReusesItsKeepAliveConnection() throws Exception {
        byte[] body = "xhellox".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 3; i++) {
            SmallHttpClient.Response r = client.sendBlocking("PUT", uri("/echo?a=1"), Map.of("Content-Type", "text/x"),
                    body, 1, 5, Duration.ofSeconds(5));
            assertThat(r.status()).isEqualTo(201);
            assertThat(r.bodyText()).isEqualTo("PUT /echo?a=1 hello text/x");
        }
        assertThat(remotePeers).as("one pooled connection for sequential calls").hasSize(1);
    }

    @Test
    void aCallWithoutAnAnswerInItsTimeoutFailsWithTheJdkClientsTimeoutType() {
        CompletableFuture<SmallHttpClient.Response> call = client.send("GET", uri("/slow"), Map.of(), null,
                Duration.ofMillis(200));
        assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(HttpTimeoutException.class);
    }

    @Test
    void nobodyListeningIsAConnectException() throws Exception {
        // Held until the dial has failed: a port picked and closed could be taken by another bind meanwhile.
        try (HeldPort closed = LoopbackPorts.held()) {
            assertThatThrownBy(() -> client.sendBlocking("GET", URI.create("http://127.0.0.1:" + closed.port() + "/"),
                    Map.of(), null, 0, 0, Duration.ofSeconds(5))).isInstanceOf(ConnectException.class);
        }
    }

    @Test
    void aStreamDeliversEachLineAsItArrivesThenItsEnd() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        CompletableFuture<Throwable> end = new CompletableFuture<>();
        client.stream(uri("/lines"), Map.of(), new StreamListener() {
            @Override
            public void onLine(String line) {
                lines.add(line);
            }

            @Override
            public void onRefused(int status, byte[] body) {
                lines.add("refused " + status);
            }

            @Override
            public void onEnd(Throwable error) {
                end.complete(error);
            }
        });
        assertThat(end.get(10, TimeUnit.SECONDS)).isNull();
        assertThat(lines).containsExactly("first", "second", "", "last");
    }

    @Test
    void aStreamRefusedWithAnErrorStatusGetsItsBodyAndEnds() throws Exception {
        CompletableFuture<String> refused = new CompletableFuture<>();
        CompletableFuture<Throwable> end = new CompletableFuture<>();
        client.stream(uri("/refuse"), Map.of(), new StreamListener() {
            @Override
            public void onLine(String line) {
                refused.complete("unexpected line " + line);
            }

            @Override
            public void onRefused(int status, byte[] body) {
                refused.complete(status + " " + new String(body, StandardCharsets.UTF_8));
            }

            @Override
            public void onEnd(Throwable error) {
                end.complete(error);
            }
        });
        assertThat(refused.get(10, TimeUnit.SECONDS)).isEqualTo("404 {\"error\":\"no\"}");
        assertThat(end.get(10, TimeUnit.SECONDS)).isNull();
    }
}
