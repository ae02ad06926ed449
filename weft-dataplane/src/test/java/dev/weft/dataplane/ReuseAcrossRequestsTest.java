package dev.weft.dataplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the sidecars reuse from one request to the next must carry nothing of the previous one. Through real sidecars
 * on loopback, with the production defaults (tracing every request, no access log):
 * <ul>
 *   <li>the span exporter gives each exchange's record back to its Worker once it has encoded it, and the Worker's
 *   next exchange is recorded on it: failed, retried requests first, then, once their spans were exported,
 *   successful ones with other trace ids and deadlines on the same keep-alive connection, each of whose spans must
 *   describe its own request alone;</li>
 *   <li>each decoder fills the header lists of its connection's finished exchanges again, requests and answers, on
 *   both sides: heads with different fields one after the other on one connection must each arrive with their own
 *   fields only;</li>
 *   <li>each Worker carries its next requests on the exchanges that ended cleanly ({@code exchange/ExchangeSpares}),
 *   on both sides: pipelined requests (the next one opened while the previous one is ending), and requests that
 *   end cleanly mixed with ones that do not (a streamed answer, a refusal), must each get their own answer.</li>
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReuseAcrossRequestsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final TestApp app;
    private final TestApp consumerApp;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private MeshFixture mesh;
    private Sidecar consumer;

    ReuseAcrossRequestsTest() throws Exception {
        app = new TestApp();
        consumerApp = new TestApp();
    }

    @BeforeAll
    void start() throws Exception {
        mesh = new MeshFixture("event-loop"); // the production defaults: tracing every request, no access log
        mesh.provider("provider", "provider-1", app.address(), 1, 8);
        consumer = mesh.consumerOf("provider", consumerApp);
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {mesh, app, consumerApp, http}) {
            c.close();
        }
    }

    private record Sent(String trace, String callerSpan, int status) {}

    /** POSTs "hello" to {@code target} (one of this call's own: the app records its headers by target). */
    private Sent call(String target, String deadlineMs) throws Exception {
        HexFormat hex = HexFormat.of();
        ThreadLocalRandom r = ThreadLocalRandom.current();
        String trace = hex.toHexDigits(r.nextLong() | 1) + hex.toHexDigits(r.nextLong() | 1);
        String span = hex.toHexDigits(r.nextLong() | 1);
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + MeshFixture.port(consumer, "upstream provider") + target))
                        .header("traceparent", "00-" + trace + "-" + span + "-01")
                        .header("x-weft-deadline-ms", deadlineMs)
                        .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("hello")).build(),
                HttpResponse.BodyHandlers.ofString());
        return new Sent(trace, span, resp.statusCode());
    }

    /** The trace's two spans (client, server) once both reached the control plane, within 15 s. */
    private JsonNode[] spansOf(String trace) throws Exception {
        String url = "http://127.0.0.1:" + mesh.controlAddress.getPort() + "/api/v2/trace/" + trace;
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode t = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
                    .build(), HttpResponse.BodyHandlers.ofString()).body());
            if (t.isArray() && t.size() == 2) {
                JsonNode a = t.get(0);
                JsonNode b = t.get(1);
                return a.get("kind").asText().equals("CLIENT") ? new JsonNode[] {a, b} : new JsonNode[] {b, a};
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out after 15 s waiting for the two spans of trace " + trace);
    }

    @Test
    void aSpanRecordedOnAReusedRecordDescribesItsOwnRequestAndNothingOfThePreviousOne() throws Exception {
        app.forcedStatus = 500;
        List<Sent> failed = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            failed.add(call("/echo?failed=" + i, "5000"));
        }
        for (Sent s : failed) {
            assertThat(s.status()).isEqualTo(500);
            JsonNode[] spans = spansOf(s.trace());
            assertThat(spans[0].get("tags").get("http.status_code").asText()).isEqualTo("500");
            assertThat(spans[0].get("tags").has("error")).isTrue();
        }
        Thread.sleep(300); // the exporter gives the records back right after its post returned

        app.forcedStatus = 0;
        List<Sent> ok = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            ok.add(call("/echo?ok=" + i, Integer.toString(7000 + i)));
            // By this request's own target: a request of another test may reach the app late (a 504's, for one).
            Map<String, List<String>> headers = app.headersOf("POST /echo?ok=" + i);
            String atApp = headers.get("traceparent").getFirst();
            assertThat(atApp).startsWith("00-" + ok.get(i).trace() + "-").doesNotContain(ok.get(i).callerSpan());
            long deadline = Long.parseLong(headers.get("x-weft-deadline-ms").getFirst());
            assertThat(deadline).as("the deadline this request gave, less the hop").isBetween(6000L, 7000L + i);
        }
        for (Sent s : ok) {
            assertThat(s.status()).isEqualTo(200);
            JsonNode[] spans = spansOf(s.trace());
            JsonNode client = spans[0];
            JsonNode server = spans[1];
            assertThat(client.get("traceId").asText()).isEqualTo(s.trace());
            assertThat(client.get("parentId").asText()).isEqualTo(s.callerSpan());
            assertThat(server.get("parentId").asText()).isEqualTo(client.get("id").asText());
            for (JsonNode span : spans) {
                JsonNode tags = span.get("tags");
                assertThat(tags.get("http.status_code").asText()).isEqualTo("200");
                assertThat(tags.has("error")).isFalse();
                assertThat(tags.has("weft.error")).isFalse();
                assertThat(tags.has("weft.attempts")).isFalse();
                assertThat(tags.has("weft.upstream.status_code")).isFalse();
                assertThat(tags.get("weft.bytes_in").asText()).isEqualTo("5");
                List<String> steps = new ArrayList<>();
                span.get("annotations").forEach(a -> steps.add(a.get("value").asText()));
                assertThat(steps).containsExactly("admitted", "connected", "sent", "first-byte");
                assertThat(span.get("duration").asLong()).isLessThan(10_000_000L);
            }
            assertThat(server.get("timestamp").asLong()).isGreaterThanOrEqualTo(client.get("timestamp").asLong());
        }
    }

    @Test
    void eachHeadOnAConnectionCarriesItsOwnFieldsOnlyInBothDirections() throws Exception {
        URI base = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider"));
        for (int round = 0; round < 3; round++) {
            // Each request has a target of its own: the app keeps the header fields of each apart, so a request of
            // another test reaching it late (a 504's, for one) cannot stand in for this one.
            String bigTarget = "/big/round-" + round + "?bytes=10";
            HttpResponse<byte[]> big = http.send(HttpRequest.newBuilder(base.resolve(bigTarget))
                    .header("x-first", "a" + round).header("x-shared", "one").timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(big.statusCode()).isEqualTo(200);
            assertThat(big.body()).hasSize(10);
            Map<String, List<String>> first = app.headersOf("GET " + bigTarget);
            assertThat(first).containsKeys("x-first", "x-shared").doesNotContainKey("x-second");
            assertThat(first.get("x-first")).containsExactly("a" + round);
            assertThat(big.headers().firstValue("content-type")).hasValue("application/octet-stream");
            assertThat(big.headers().firstValue("x-app")).isEmpty();

            String echoTarget = "/echo?round=" + round + "-second";
            HttpResponse<String> echo = http.send(HttpRequest.newBuilder(base.resolve(echoTarget))
                    .header("x-second", "b" + round).timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofString("hello")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(echo.statusCode()).isEqualTo(200);
            assertThat(echo.body()).startsWith("5 ");
            Map<String, List<String>> second = app.headersOf("POST " + echoTarget);
            assertThat(second).containsKey("x-second").doesNotContainKeys("x-first", "x-shared");
            assertThat(second.get("x-second")).containsExactly("b" + round);
            assertThat(echo.headers().firstValue("content-type")).hasValue("text/plain");
            assertThat(echo.headers().firstValue("x-app")).hasValue("test");
            assertThat(echo.headers().firstValue("transfer-encoding")).isEmpty();
        }
    }

    @Test
    void pipelinedRequestsOnReusedExchangesEachGetTheirOwnAnswer() throws Exception {
        // All written at once: the consumer side opens each next exchange from inside the end of the previous one.
        int n = 24;
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<byte[]> bodies = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] body = ("request " + i + " " + "x".repeat(i * 7)).getBytes(StandardCharsets.US_ASCII);
            bodies.add(body);
            all.writeBytes(("POST /echo?n=" + i + " HTTP/1.1\r\nHost: provider\r\nx-round: " + i
                    + "\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            all.writeBytes(body);
        }
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), MeshFixture.port(consumer, "upstream provider"))) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(all.toByteArray());
            out.flush();
            InputStream in = socket.getInputStream();
            for (int i = 0; i < n; i++) {
                String head = readHead(in);
                assertThat(head).as("answer %d", i).startsWith("HTTP/1.1 200");
                int length = Integer.parseInt(head.replaceAll("(?is).*\r\ncontent-length: *(\\d+).*", "$1"));
                String answer = new String(in.readNBytes(length), StandardCharsets.US_ASCII);
                CRC32 crc = new CRC32();
                crc.update(bodies.get(i));
                assertThat(answer).as("answer %d", i)
                        .isEqualTo(bodies.get(i).length + " " + crc.getValue() + " POST /echo?n=" + i);
            }
        }
    }

    @Test
    void exchangesThatEndCleanlyAndOnesThatDoNotAlternateWithoutCarryingAnythingOver() throws Exception {
        URI base = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider"));
        for (int round = 0; round < 10; round++) {
            String body = "round " + round;
            HttpResponse<String> echo = http.send(HttpRequest.newBuilder(base.resolve("/echo?round=" + round))
                    .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(echo.statusCode()).isEqualTo(200);
            assertThat(echo.body()).startsWith(body.length() + " ").endsWith(" POST /echo?round=" + round);

            // Streamed (chunked, larger than one read): its exchange is left to the garbage collector.
            HttpResponse<byte[]> big = http.send(HttpRequest.newBuilder(base.resolve("/big?bytes=200000"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(big.statusCode()).isEqualTo(200);
            assertThat(big.body()).hasSize(200_000);

            // Past its deadline before the app answers: failed (504) on both sides, its exchanges not given back.
            HttpResponse<String> late = http.send(HttpRequest.newBuilder(base.resolve("/slow?ms=300"))
                    .header("x-weft-deadline-ms", "30").timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofString("late")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(late.statusCode()).isEqualTo(504);
            assertThat(late.headers().firstValue("x-weft-error")).isPresent();
        }
    }

    /** Reads an answer's head, up to and including its blank line. */
    private static String readHead(InputStream in) throws Exception {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            byte[] h = head.toByteArray();
            int k = h.length;
            if (k >= 4 && h[k - 4] == '\r' && h[k - 3] == '\n' && h[k - 2] == '\r' && h[k - 1] == '\n') {
                return head.toString(StandardCharsets.US_ASCII);
            }
        }
        throw new AssertionError("connection closed inside an answer's head: " + head);
    }
}
