package dev.weft.control.diagnose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlPlane;
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
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code GET /v1/diagnose} on a real control plane, over HTTP, with spans posted to its collector. */
class DiagnoseApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long S = 1_000_000;

    @TempDir
    Path dataDir;
    private ControlPlane control;
    private String base;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeEach
    void start() throws Exception {
        control = new ControlPlane(ControlPlane.DEFAULT_WATCH_HEARTBEAT, 50_000);
        base = "http://127.0.0.1:" + control.start(new InetSocketAddress("127.0.0.1", 0), dataDir).getPort();
    }

    @AfterEach
    void stop() {
        http.shutdownNow();
        control.close();
    }

    @Test
    void names_the_slow_instance_from_posted_spans_with_the_stable_fields() throws Exception {
        long now = System.currentTimeMillis() * 1000;
        List<List<DiagnoseSpan>> traces = new ArrayList<>();
        FourTiers normal = new FourTiers();
        FourTiers slow = new FourTiers().c(FourTiers.C1, 200_000);
        for (int i = 0; i < 100; i++) {
            traces.add(normal.c(i % 2 == 0 ? FourTiers.C1 : FourTiers.C2, 20_000).trace(now - 100 * S + i * S / 2));
        }
        for (int i = 0; i < 40; i++) {
            traces.add(i % 4 == 0 ? slow.trace(now - 20 * S + i * S / 4)
                    : normal.c(FourTiers.C2, 20_000).trace(now - 20 * S + i * S / 4));
        }
        HttpResponse<String> posted = send("POST", "/api/v2/spans", ZipkinJson.of(traces));
        assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);

        HttpResponse<String> r = send("GET", "/v1/diagnose?window=30s&baseline=2m", null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        JsonNode d = JSON.readTree(r.body());
        assertThat(d.get("healthy").asBoolean()).isFalse();
        assertThat(d.get("verdict").asText()).startsWith("c endpoint 127.0.0.1:7003 (c-1) is 10× slower");
        JsonNode c = d.get("culprits").get(0);
        for (String field : List.of("service", "endpoint", "kind", "score", "selfTimeBeforeMs", "selfTimeNowMs",
                "queueTimeMs", "errorKinds", "traceIds")) {
            assertThat(c.has(field)).as(field).isTrue();
        }
        assertThat(c.get("service").asText()).isEqualTo("c");
        assertThat(c.get("endpoint").asText()).isEqualTo(FourTiers.C1);
        assertThat(c.get("kind").asText()).isEqualTo("latency");
        assertThat(c.get("selfTimeBeforeMs").asDouble()).isEqualTo(20.0);
        assertThat(c.get("selfTimeNowMs").asDouble()).isEqualTo(200.0);
        assertThat(c.get("traceIds")).hasSize(5);
        assertThat(d.get("backPressure").isArray()).isTrue();
        assertThat(d.get("overloaded").isArray()).isTrue();

        // The same answer as ./weft diagnose prints it, and as it passes it on with --json.
        java.io.StringWriter out = new java.io.StringWriter();
        int code = new picocli.CommandLine(new dev.weft.control.cli.DiagnoseCommand()).setOut(new java.io.PrintWriter(out))
                .execute("--control", base.replace("http://", "weft://"), "--window", "30s", "--baseline", "2m");
        assertThat(code).isZero();
        assertThat(out.toString()).startsWith("c endpoint 127.0.0.1:7003 (c-1) is 10× slower")
                .contains("127.0.0.1:7003 c-1", "latency", "b, a and entry are waiting on it");
        java.io.StringWriter json = new java.io.StringWriter();
        assertThat(new picocli.CommandLine(new dev.weft.control.cli.DiagnoseCommand()).setOut(new java.io.PrintWriter(json))
                .execute("--control", base, "--json")).isZero();
        assertThat(JSON.readTree(json.toString()).get("culprits").get(0).get("endpoint").asText()).isEqualTo(FourTiers.C1);
    }

    @Test
    void an_slo_in_a_stored_policy_document_sets_the_error_threshold() throws Exception {
        long now = System.currentTimeMillis() * 1000;
        List<List<DiagnoseSpan>> traces = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            FourTiers t = new FourTiers();
            t.bFails = i % 5 == 0;
            traces.add(t.trace(now - 20 * S + i * S / 5));
        }
        assertThat(send("POST", "/api/v2/spans", ZipkinJson.of(traces)).statusCode()).isEqualTo(202);
        JsonNode before = JSON.readTree(send("GET", "/v1/diagnose", null).body());
        assertThat(before.get("culprits").get(0).get("service").asText()).isEqualTo("b");

        HttpResponse<String> put = send("PUT", "/v1/policies/team", "services:\n  b:\n    slo: {error-rate: 30%}\n");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        JsonNode after = JSON.readTree(send("GET", "/v1/diagnose", null).body());
        assertThat(after.get("culprits")).as("20%% is within b's SLO").isEmpty();
    }

    @Test
    void bad_parameters_and_methods_are_refused_with_what_was_expected() throws Exception {
        HttpResponse<String> unknown = send("GET", "/v1/diagnose?windw=30s", null);
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(unknown.body()).contains("unknown query parameter 'windw' (known: baseline, window)");
        HttpResponse<String> bad = send("GET", "/v1/diagnose?window=30", null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("invalid window '30'");
        HttpResponse<String> big = send("GET", "/v1/diagnose?window=2h", null);
        assertThat(big.statusCode()).isEqualTo(400);
        assertThat(big.body()).contains("expected 1s to 1h");
        HttpResponse<String> post = send("POST", "/v1/diagnose", "{}");
        assertThat(post.statusCode()).isEqualTo(405);
        HttpResponse<String> empty = send("GET", "/v1/diagnose", null);
        assertThat(empty.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(empty.body()).get("verdict").asText()).startsWith("no traces in the last 30 s");
        assertThat(send("GET", "/v1/health", null).statusCode()).as("other routes pass on").isEqualTo(200);
    }

    @Test
    void the_command_says_which_control_plane_it_could_not_reach() throws Exception {
        java.io.StringWriter err = new java.io.StringWriter();
        // Held until the command has tried: a port picked and closed could be taken by another bind meanwhile.
        try (dev.weft.testing.HeldPort away = dev.weft.testing.LoopbackPorts.held()) {
            int port = away.port();
            int code = new picocli.CommandLine(new dev.weft.control.cli.DiagnoseCommand())
                    .setErr(new java.io.PrintWriter(err)).execute("--control", "127.0.0.1:" + port);
            assertThat(code).isEqualTo(1);
            assertThat(err.toString()).startsWith("weft diagnose: cannot reach http://127.0.0.1:" + port + "/v1/diagnose");
        }
        assertThat(new picocli.CommandLine(new dev.weft.control.cli.DiagnoseCommand()).setErr(new java.io.PrintWriter(err))
                .execute("--control", "ftp://x")).as("a bad address is a usage error").isEqualTo(2);
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                // The operator token the control plane generated: storing a policy needs it.
                .header("Authorization", dev.weft.control.Operator.header(dataDir))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
