package dev.weft.dataplane;

import dev.weft.testing.MisbehavingApp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Issue 16's row "app → client", end to end over real sockets: a client, a consumer sidecar, a provider sidecar and a
 * {@link MisbehavingApp}. An answer that breaks HTTP/1.1's framing or field rules is a 502 {@code app-protocol-error}
 * to its client at once (the issue saw a 200 head, no body and a connection held for about 22 s), the app's connection
 * is closed rather than reused, the refusal is counted in {@code weft_app_protocol_errors_total}, and requests in
 * flight beside it are unaffected. An answer that breaks off after it started closes the client's connection; one that
 * stalls holds only its own request, and its client leaving frees the app's connection.
 */
class MisbehavingAppSocketTest {
    private static MeshFixture mesh;
    private static MisbehavingApp app;
    private static TestApp consumerApp;
    private static Sidecar provider;
    private static ExecutorService pool;
    private static HttpClient http;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        mesh = new MeshFixture("event-loop");
        app = new MisbehavingApp();
        consumerApp = new TestApp();
        provider = mesh.provider("provider", "p1", app.address(), 1, 64);
        Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
        port = MeshFixture.port(consumer, "upstream provider");
        pool = Executors.newVirtualThreadPerTaskExecutor();
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(pool).build();
        await().atMost(Duration.ofSeconds(10)).until(() -> call("GET", "/ok").statusCode() == 200);
    }

    @AfterAll
    static void stop() throws Exception {
        mesh.close();
        app.close();
        consumerApp.close();
        pool.close();
    }

    private static HttpResponse<String> call(String method, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The provider's {@code weft_app_protocol_errors_total}, from its /metrics. */
    private static long appProtocolErrors() throws Exception {
        String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + MeshFixture.port(provider, "admin") + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        for (String line : metrics.split("\n")) {
            if (line.startsWith("weft_app_protocol_errors_total ")) {
                long n = Long.parseLong(line.substring(line.indexOf(' ') + 1));
                // The same count in the one family of every boundary's refusals.
                assertThat(metrics).contains("weft_rejected_total{boundary=\"app_answer\",reason=\"app_protocol_error\"} " + n);
                return n;
            }
        }
        throw new AssertionError("no weft_app_protocol_errors_total in the provider's /metrics");
    }

    static Stream<String> badFraming() {
        return MisbehavingApp.BAD_FRAMING.keySet().stream().sorted();
    }

    @ParameterizedTest
    @MethodSource("badFraming")
    void anAnswerThatBreaksHttp11IsA502AppProtocolErrorAtOnceAndTheAppConnectionIsClosed(String path) throws Exception {
        long errorsBefore = appProtocolErrors();
        int closedBefore = app.closedByPeer();
        int askedBefore = app.requests(path);
        long start = System.nanoTime();

        // A POST: a 502 is not retried for it, so the app answers once and the counts move by one.
        HttpResponse<String> r = call("POST", path);

        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(r.headers().firstValue("x-weft-error")).hasValue("app-protocol-error");
        assertThat(took).as("answered at once, not after a timeout").isLessThan(Duration.ofSeconds(5));
        assertThat(app.requests(path)).as("asked once: a POST's 502 is not retried").isEqualTo(askedBefore + 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> app.closedByPeer() > closedBefore);
        assertThat(app.closedByPeer()).as("the app connection closed").isEqualTo(closedBefore + 1);
        assertThat(app.reusedAfterBadAnswer()).as("never reused after a bad answer").isZero();
        assertThat(appProtocolErrors()).isEqualTo(errorsBefore + 1);
    }

    @Test
    void fortyRequestsInFlightBesideEveryBadAnswerAllSucceed() throws Exception {
        long errorsBefore = appProtocolErrors();
        int closedBefore = app.closedByPeer();
        List<Future<HttpResponse<String>>> innocent = new ArrayList<>();
        List<Future<HttpResponse<String>>> bad = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            innocent.add(pool.submit((Callable<HttpResponse<String>>) () -> call("GET", "/ok?ms=20")));
        }
        for (String path : MisbehavingApp.BAD_FRAMING.keySet()) {
            bad.add(pool.submit((Callable<HttpResponse<String>>) () -> call("POST", path)));
        }

        for (Future<HttpResponse<String>> f : bad) {
            HttpResponse<String> r = f.get(15, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.uri().getPath()).isEqualTo(502);
            assertThat(r.headers().firstValue("x-weft-error")).hasValue("app-protocol-error");
        }
        for (Future<HttpResponse<String>> f : innocent) {
            HttpResponse<String> r = f.get(15, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("ok");
        }
        int badCount = MisbehavingApp.BAD_FRAMING.size();
        await().atMost(Duration.ofSeconds(10)).until(() -> app.closedByPeer() >= closedBefore + badCount);
        assertThat(app.reusedAfterBadAnswer()).isZero();
        assertThat(appProtocolErrors()).isEqualTo(errorsBefore + badCount);
    }

    @Test
    void anAnswerThatBreaksOffAfterItStartedClosesTheClientsConnection() throws Exception {
        long resetsBefore = provider.metrics().streamsReset.sum();
        try (RawHttp client = new RawHttp(port)) {
            client.send("GET /bad/close-mid-body HTTP/1.1\r\nHost: provider\r\n\r\n");
            // The head (content-length 1000) and 100 bytes came through; then the only honest signal is the close.
            assertThatThrownBy(client::read).isInstanceOf(EOFException.class).hasMessageContaining("100 of 1000");
        }
        assertThat(provider.metrics().streamsReset.sum()).as("counted").isGreaterThan(resetsBefore);
    }

    @Test
    void aStalledAnswerHoldsOnlyItsOwnRequestAndItsClientLeavingFreesTheAppsConnection() throws Exception {
        int closedBefore = app.closedByPeer();
        try (Socket client = new Socket("127.0.0.1", port)) {
            client.setSoTimeout(10_000);
            client.getOutputStream().write("GET /bad/stall-mid-body HTTP/1.1\r\nHost: provider\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            String started = headAndBytes(client.getInputStream(), 100);
            assertThat(started).startsWith("HTTP/1.1 200").contains("content-length: 1000").endsWith("x".repeat(100));

            for (int i = 0; i < 10; i++) {
                assertThat(call("GET", "/ok").statusCode()).as("a request beside the stalled one").isEqualTo(200);
            }
            assertThat(app.closedByPeer()).as("the stalled answer's connection is still open").isEqualTo(closedBefore);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> app.closedByPeer() > closedBefore);
    }

    /** Reads an answer's head and then {@code n} bytes of its body (lower-cased field names are Weft's). */
    private static String headAndBytes(InputStream in, int n) throws Exception {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        int headEnd = -1;
        while (headEnd < 0 || got.size() < headEnd + n) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("closed after " + got.size() + " bytes: " + got);
            }
            got.write(b);
            if (headEnd < 0 && got.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                headEnd = got.size();
            }
        }
        return got.toString(StandardCharsets.ISO_8859_1);
    }
}
