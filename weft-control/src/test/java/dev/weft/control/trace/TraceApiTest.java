package dev.weft.control.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlPlane;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The control plane's Zipkin-compatible span API, over HTTP, next to an unchanged registry API. */
class TraceApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T = System.currentTimeMillis() * 1000;

    @TempDir
    Path dataDir;
    private ControlPlane control;
    private String base;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeEach
    void start() throws Exception {
        control = new ControlPlane(ControlPlane.DEFAULT_WATCH_HEARTBEAT, 10_000);
        base = "http://127.0.0.1:" + control.start(new InetSocketAddress("127.0.0.1", 0), dataDir).getPort();
    }

    @AfterEach
    void stop() {
        http.shutdownNow();
        control.close();
    }

    private HttpResponse<String> post(String path, byte[] body, String encoding) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(5))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (encoding != null) {
            b.header("Content-Encoding", encoding);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void postedSpansAreReadBackAsATraceAndFoundByQueries() throws Exception {
        String t = Spans.traceId(41);
        String batch = Spans.array(
                Spans.span(t, Spans.spanId(1), null, "CLIENT", "consumer", "provider", T, 12_000, false),
                Spans.span(t, Spans.spanId(2), Spans.spanId(1), "SERVER", "provider", null, T + 300, 11_000, false));
        HttpResponse<String> r = post("/api/v2/spans", batch.getBytes(StandardCharsets.UTF_8), null);
        assertThat(r.statusCode()).isEqualTo(202);

        JsonNode trace = JSON.readTree(get("/api/v2/trace/" + t).body());
        assertThat(trace).hasSize(2);
        assertThat(trace.get(0).get("id").asText()).isEqualTo(Spans.spanId(1));
        assertThat(trace.get(1).get("parentId").asText()).isEqualTo(Spans.spanId(1));

        assertThat(JSON.readTree(get("/api/v2/traces?serviceName=provider&lookback=60000").body())).hasSize(1);
        assertThat(JSON.readTree(get("/api/v2/traces?minDuration=20000").body())).isEmpty();
        assertThat(JSON.readTree(get("/api/v2/traces?annotationQuery=error").body())).isEmpty();
        assertThat(get("/api/v2/services").body()).isEqualTo("[\"consumer\",\"provider\"]");
        assertThat(get("/api/v2/remoteServices?serviceName=consumer").body()).isEqualTo("[\"provider\"]");
        assertThat(JSON.readTree(get("/api/v2/dependencies?endTs=" + (T / 1000 + 1000) + "&lookback=60000").body())
                .toString()).isEqualTo("[{\"parent\":\"consumer\",\"child\":\"provider\",\"callCount\":1,\"errorCount\":0}]");
        assertThat(JSON.readTree(get("/api/v2/weft/store").body()).get("spans").asInt()).isEqualTo(2);
    }

    @Test
    void largeAndGzippedBatchesAreAcceptedWhileRegistryBodiesKeepTheir64KiBLimit() throws Exception {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < 400; i++) {
            sb.append(i == 0 ? "" : ",").append(Spans.span(Spans.traceId(i), Spans.spanId(i), null, "CLIENT",
                    "consumer", "provider", T + i, 1000, false));
        }
        byte[] big = sb.append(']').toString().getBytes(StandardCharsets.UTF_8);
        assertThat(big.length).isGreaterThan(64 * 1024);
        assertThat(post("/api/v2/spans", big, null).statusCode()).isEqualTo(202);

        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(Spans.array(Spans.span(Spans.traceId(999), Spans.spanId(1), null, "CLIENT", "zipped", null, T,
                    5, false)).getBytes(StandardCharsets.UTF_8));
        }
        assertThat(post("/api/v2/spans", gz.toByteArray(), "gzip").statusCode()).isEqualTo(202);
        assertThat(get("/api/v2/trace/" + Spans.traceId(999)).statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(get("/api/v2/weft/store").body()).get("spans").asInt()).isEqualTo(401);

        // The same connection pool then sends a registry request over the limit: still refused with 413.
        HttpResponse<String> tooBig = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/leases"))
                .timeout(Duration.ofSeconds(5)).PUT(HttpRequest.BodyPublishers.ofByteArray(big)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(tooBig.statusCode()).isEqualTo(413);
        assertThat(get("/v1/health").statusCode()).isEqualTo(200);
    }

    @Test
    void errorsNameWhatWasWrong() throws Exception {
        HttpResponse<String> bad = post("/api/v2/spans", "{\"not\":\"an array\"}".getBytes(StandardCharsets.UTF_8), null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("expected a JSON array of Zipkin v2 spans", "bad-request");
        HttpResponse<String> missing = get("/api/v2/trace/" + Spans.traceId(12345));
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(missing.body()).contains("not found", "unknown-trace");
        assertThat(get("/api/v2/traces?minDuration=soon").body()).contains("invalid minDuration 'soon'");
        assertThat(get("/api/v2/traces?annotationQuery=http.path%3D%2F").body()).contains("supported: error");
        assertThat(get("/api/v2/nothing").statusCode()).isEqualTo(404);
        assertThat(get("/api/v1/spans").body()).contains("under /api/v2");
    }

    @Test
    void aControlPlaneWithoutASpanStoreSaysSo(@TempDir Path other) throws Exception {
        try (ControlPlane none = new ControlPlane(ControlPlane.DEFAULT_WATCH_HEARTBEAT, 0)) {
            int port = none.start(new InetSocketAddress("127.0.0.1", 0), other).getPort();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/api/v2/traces")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(404);
            assertThat(r.body()).contains("--trace-store-spans 0");
        }
    }
}
