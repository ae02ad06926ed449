package dev.weft.dataplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

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
 *   fields only.</li>
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

    private Sent call(String deadlineMs) throws Exception {
        HexFormat hex = HexFormat.of();
        ThreadLocalRandom r = ThreadLocalRandom.current();
        String trace = hex.toHexDigits(r.nextLong() | 1) + hex.toHexDigits(r.nextLong() | 1);
        String span = hex.toHexDigits(r.nextLong() | 1);
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + MeshFixture.port(consumer, "upstream provider") + "/echo"))
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
            failed.add(call("5000"));
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
            ok.add(call(Integer.toString(7000 + i)));
            String atApp = app.lastHeaders.get("traceparent").getFirst();
            assertThat(atApp).startsWith("00-" + ok.get(i).trace() + "-").doesNotContain(ok.get(i).callerSpan());
            long deadline = Long.parseLong(app.lastHeaders.get("x-weft-deadline-ms").getFirst());
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
            HttpResponse<byte[]> big = http.send(HttpRequest.newBuilder(base.resolve("/big?bytes=10"))
                    .header("x-first", "a" + round).header("x-shared", "one").timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(big.statusCode()).isEqualTo(200);
            assertThat(big.body()).hasSize(10);
            assertThat(app.lastHeaders).containsKeys("x-first", "x-shared").doesNotContainKey("x-second");
            assertThat(app.lastHeaders.get("x-first")).containsExactly("a" + round);
            assertThat(big.headers().firstValue("content-type")).hasValue("application/octet-stream");
            assertThat(big.headers().firstValue("x-app")).isEmpty();

            HttpResponse<String> echo = http.send(HttpRequest.newBuilder(base.resolve("/echo"))
                    .header("x-second", "b" + round).timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofString("hello")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(echo.statusCode()).isEqualTo(200);
            assertThat(echo.body()).startsWith("5 ");
            assertThat(app.lastHeaders).containsKey("x-second").doesNotContainKeys("x-first", "x-shared");
            assertThat(app.lastHeaders.get("x-second")).containsExactly("b" + round);
            assertThat(echo.headers().firstValue("content-type")).hasValue("text/plain");
            assertThat(echo.headers().firstValue("x-app")).hasValue("test");
            assertThat(echo.headers().firstValue("transfer-encoding")).isEmpty();
        }
    }
}
