package dev.weft.dataplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.cli.TraceCommand;
import dev.weft.dataplane.observe.ObservabilityConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spans reach a real Zipkin server (Maven Central's exec jar, in-memory storage, started once for the class on a
 * loopback port it picks) and are read back through Zipkin's own API, then rendered by {@code ./weft trace}
 * pointed at that Zipkin.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZipkinExportTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TRACE = "5af7183fb1d4cf5f4d1b4e9a2c3b7d10";
    private static final String CALLER_SPAN = "0102030405060708";

    private ExternalServer zipkin;
    private String zipkinUrl;
    private MeshFixture mesh;
    private TestApp app;
    private TestApp consumerApp;
    private Sidecar consumer;
    private HttpClient http;

    @BeforeAll
    void start() throws Exception {
        Path jar = Path.of(System.getProperty("weft.zipkin.jar", "target/zipkin/zipkin-server.jar"));
        assertThat(jar).as("the Zipkin exec jar, copied by Maven (maven-dependency-plugin, execution"
                + " zipkin-server-for-tests) before the tests; run the tests through Maven").exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        // One CPU and a serial collector: Zipkin's start-up burst must not starve the sidecars this test starts next
        // on a small, busy machine.
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:ActiveProcessorCount=1",
                "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED", "-jar", jar.toString(),
                // Port 0 on loopback only; Zipkin logs the port it got.
                "--armeria.ports[0].port=0", "--armeria.ports[0].ip=127.0.0.1", "--armeria.ports[0].protocols[0]=http");
        pb.environment().put("STORAGE_TYPE", "mem");
        pb.environment().put("QUERY_PORT", "0");
        zipkin = new ExternalServer("zipkin", pb);
        String port = zipkin.awaitLine(Pattern.compile("Serving HTTP at /127\\.0\\.0\\.1:(\\d+)"), Duration.ofSeconds(90));
        zipkinUrl = "http://127.0.0.1:" + port;
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        awaitHealthy();

        mesh = new MeshFixture("event-loop");
        mesh.observability = new ObservabilityConfig(true, true, 1.0, zipkinUrl + "/api/v2/spans", "zipkin",
                Set.of(ObservabilityConfig.Propagation.W3C), Map.of(), List.of());
        app = new TestApp();
        consumerApp = new TestApp();
        mesh.provider("provider", "provider-1", app.address(), 1, 8);
        consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
    }

    /** Zipkin logs its port before its storage and collectors are up; /health says when they are. */
    private void awaitHealthy() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> h = http.send(HttpRequest.newBuilder(URI.create(zipkinUrl + "/health"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                if (h.statusCode() == 200 && h.body().contains("UP")) {
                    return;
                }
            } catch (java.io.IOException e) {
                // not answering yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("Zipkin not healthy within 60 s; its output:\n" + String.join("\n", zipkin.tail()));
    }

    @AfterAll
    void stop() throws Exception {
        if (mesh != null) {
            mesh.close();
        }
        for (AutoCloseable c : new AutoCloseable[]{app, consumerApp, http}) {
            if (c != null) {
                c.close();
            }
        }
        if (zipkin != null) {
            zipkin.close();
        }
    }

    @Test
    void bothSidecarsSpansAreReadBackFromZipkinAsOneTraceAndWeftTraceDrawsIt() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + MeshFixture.port(consumer, "upstream provider") + "/echo"))
                .timeout(Duration.ofSeconds(10)).header("traceparent", "00-" + TRACE + "-" + CALLER_SPAN + "-01")
                .POST(HttpRequest.BodyPublishers.ofString("hello")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);

        JsonNode trace = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> t = http.send(HttpRequest.newBuilder(URI.create(zipkinUrl + "/api/v2/trace/" + TRACE))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            if (t.statusCode() == 200) {
                JsonNode spans = JSON.readTree(t.body());
                if (spans.size() == 2) {
                    trace = spans;
                    break;
                }
            }
            Thread.sleep(200);
        }
        assertThat(trace).as("two spans of trace " + TRACE + " at Zipkin within 30 s; Zipkin's output:\n"
                + String.join("\n", zipkin.tail())).isNotNull();
        JsonNode client = null;
        JsonNode server = null;
        for (JsonNode s : trace) {
            if ("CLIENT".equals(s.get("kind").asText())) {
                client = s;
            } else if ("SERVER".equals(s.get("kind").asText())) {
                server = s;
            }
        }
        assertThat(client).isNotNull();
        assertThat(server).isNotNull();
        assertThat(client.get("parentId").asText()).isEqualTo(CALLER_SPAN);
        assertThat(server.get("parentId").asText()).isEqualTo(client.get("id").asText());
        assertThat(client.at("/localEndpoint/serviceName").asText()).isEqualTo("consumer");
        assertThat(client.at("/remoteEndpoint/serviceName").asText()).isEqualTo("provider");
        assertThat(server.at("/localEndpoint/serviceName").asText()).isEqualTo("provider");
        List<String> steps = new ArrayList<>();
        server.get("annotations").forEach(a -> steps.add(a.get("value").asText()));
        assertThat(steps).containsExactly("admitted", "connected", "sent", "first-byte");

        // Zipkin indexes services too: the UI's service list shows the mesh.
        JsonNode services = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(zipkinUrl + "/api/v2/services"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body());
        assertThat(services.toString()).contains("consumer", "provider");

        String waterfall = run("--collector", zipkinUrl, TRACE);
        assertThat(waterfall).contains("trace " + TRACE, "2 spans", "consumer → provider", "provider (inbound)",
                "app ", "legend:");
        String list = run("--collector", zipkinUrl, "--lookback", "1h");
        assertThat(list).contains(TRACE, "consumer → provider");
    }

    private static String run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = new CommandLine(new TraceCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute(args);
        assertThat(code).as("weft trace " + String.join(" ", args) + " failed: " + err).isZero();
        return out.toString();
    }
}
