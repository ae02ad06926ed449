package dev.weft.dataplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Prometheus (Debian's package) scrapes two running sidecars every second, and the golden metrics are read
 * back through Prometheus' HTTP query API, with the queries docs/observability.md suggests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PrometheusScrapeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int REQUESTS = 20;

    private MeshFixture mesh;
    private TestApp app;
    private TestApp consumerApp;
    private Sidecar consumer;
    private Sidecar provider;
    private HttpClient http;
    private Path dir;
    private ExternalServer prometheus;
    private String prometheusUrl;

    @BeforeAll
    void start() throws Exception {
        Path binary = Stream.of("/usr/bin/prometheus", "/usr/local/bin/prometheus").map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
        assertThat(binary).as("the prometheus binary (apt-get install prometheus; .ci/run installs it)").isNotNull();
        mesh = new MeshFixture("event-loop");
        app = new TestApp();
        consumerApp = new TestApp();
        provider = mesh.provider("provider", "provider-1", app.address(), 1, 8);
        consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

        dir = Files.createTempDirectory("weft-prometheus");
        Files.writeString(dir.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: weft
                    static_configs:
                      - targets: ['127.0.0.1:%d', '127.0.0.1:%d']
                """.formatted(MeshFixture.port(consumer, "admin"), MeshFixture.port(provider, "admin")));
        prometheus = new ExternalServer("prometheus", new ProcessBuilder(binary.toString(),
                "--config.file=" + dir.resolve("prometheus.yml"), "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:0"));
        String port = prometheus.awaitLine(Pattern.compile("msg=\"Listening on\" address=127\\.0\\.0\\.1:(\\d+)"),
                Duration.ofSeconds(30));
        prometheusUrl = "http://127.0.0.1:" + port;
    }

    @AfterAll
    void stop() throws Exception {
        if (prometheus != null) {
            prometheus.close();
        }
        if (mesh != null) {
            mesh.close();
        }
        for (AutoCloseable c : new AutoCloseable[]{app, consumerApp, http}) {
            if (c != null) {
                c.close();
            }
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private JsonNode query(String promql) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(prometheusUrl + "/api/v1/query?query="
                + URLEncoder.encode(promql, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(promql + " → " + r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).at("/data/result");
    }

    /** The query's single value once it satisfies {@code ok}; Prometheus' first scrape comes seconds after start. */
    private double awaitValue(String promql, java.util.function.DoublePredicate ok) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            JsonNode result = query(promql);
            last = result.toString();
            if (result.size() == 1) {
                double v = Double.parseDouble(result.get(0).at("/value/1").asText());
                if (ok.test(v)) {
                    return v;
                }
            }
            Thread.sleep(250);
        }
        throw new AssertionError("Prometheus never answered " + promql + " as expected within 45 s; last: " + last
                + "\nPrometheus output:\n" + String.join("\n", prometheus.tail()));
    }

    @Test
    void prometheusScrapesTheSidecarsAndAnswersGoldenMetricQueries() throws Exception {
        for (int i = 0; i < REQUESTS; i++) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + MeshFixture.port(consumer, "upstream provider") + "/echo"))
                    .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("hello")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
        }
        assertThat(awaitValue("sum(up{job=\"weft\"})", v -> v == 2)).isEqualTo(2);
        assertThat(awaitValue("sum(weft_route_requests_total{direction=\"outbound\",service=\"consumer\","
                + "dst_service=\"provider\",status_class=\"2xx\"})", v -> v >= REQUESTS)).isEqualTo(REQUESTS);
        assertThat(awaitValue("sum(weft_route_requests_total{direction=\"inbound\",service=\"provider\"})",
                v -> v >= REQUESTS)).isEqualTo(REQUESTS);
        // Success ratio and a percentile, as an operator would ask for them.
        assertThat(awaitValue("sum(weft_route_requests_total{direction=\"inbound\",status_class!=\"5xx\"})"
                + " / sum(weft_route_requests_total{direction=\"inbound\"})", v -> v > 0)).isEqualTo(1.0);
        double p99 = awaitValue("histogram_quantile(0.99, sum by (le) (weft_route_request_duration_seconds_bucket"
                + "{direction=\"outbound\",dst_service=\"provider\"}))", v -> v > 0);
        assertThat(p99).isLessThan(10);
        assertThat(awaitValue("sum(weft_mesh_hops_total)", v -> v >= 2 * REQUESTS)).isGreaterThanOrEqualTo(2 * REQUESTS);
        assertThat(awaitValue("count(weft_mesh_cpu_seconds_total)", v -> v == 4)).isEqualTo(4);
        assertThat(awaitValue("min(weft_registry_connected)", v -> v == 1)).isEqualTo(1);
    }
}
