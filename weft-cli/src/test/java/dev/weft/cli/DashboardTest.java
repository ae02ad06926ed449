package dev.weft.cli;

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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard against a real mesh ({@link DashboardMesh}: control plane, sidecars, example apps, load): its JSON
 * under /v1/ui/ and, in headless Chromium, its pages (src/test/js/dashboard.mjs, screenshots under
 * target/dashboard-screenshots/).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private DashboardMesh mesh;
    private HttpClient http;

    @BeforeAll
    void start() throws Exception {
        mesh = new DashboardMesh();
        mesh.load(4);
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2))
                .build();
    }

    @AfterAll
    void stop() throws Exception {
        if (http != null) {
            http.close();
        }
        if (mesh != null) {
            mesh.close();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(mesh.base() + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode json(String path) throws Exception {
        HttpResponse<String> r = get(path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** Polls {@code path} until {@code done} holds, for at most 30 s; returns the last answer. */
    private JsonNode await(String path, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = json(path);
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("not within 30 s: " + path + " answered " + last);
    }

    private static JsonNode edge(JsonNode map, String from, String to) {
        for (JsonNode e : map.path("edges")) {
            if (e.path("from").asText().equals(from) && e.path("to").asText().equals(to)) {
                return e;
            }
        }
        return null;
    }

    @Test
    void theMapNamesEveryServiceAndEachEdgeWithItsRateSuccessAndP99() throws Exception {
        JsonNode map = await("/v1/ui/map", m -> edge(m, "gateway", "consumer") != null
                && edge(m, "consumer", "provider") != null
                && edge(m, "consumer", "provider").path("rate").asDouble() > 0);
        List<String> names = new ArrayList<>();
        map.path("services").forEach(s -> names.add(s.path("name").asText()));
        assertThat(names).contains("gateway", "consumer", "provider");
        JsonNode e = edge(map, "consumer", "provider");
        assertThat(e.path("success").asDouble()).isEqualTo(1.0);
        assertThat(e.path("p99").asDouble()).isPositive();
        for (JsonNode s : map.path("services")) {
            if (s.path("name").asText().equals("provider")) {
                assertThat(s.path("instances").asInt()).isEqualTo(2);
            }
        }
        JsonNode filtered = json("/v1/ui/map?filter=prov&limit=5");
        assertThat(filtered.path("services")).hasSize(1);
        assertThat(filtered.path("edges")).isEmpty();
    }

    @Test
    void anEdgeAServiceAndAnEndpointEachHaveAHistoryOfGoldenMetrics() throws Exception {
        JsonNode edge = await("/v1/ui/series?from=consumer&to=provider", s -> s.path("times").size() >= 2);
        assertThat(edge.path("kind").asText()).isEqualTo("edge");
        assertThat(edge.path("rate").size()).isEqualTo(edge.path("times").size());
        assertThat(edge.path("p90")).anySatisfy(v -> assertThat(v.asDouble()).isPositive());
        JsonNode service = await("/v1/ui/series?service=provider", s -> s.path("times").size() >= 2);
        assertThat(service.path("cpuMicrosPerRequest")).anySatisfy(v -> assertThat(v.isNumber()).isTrue());
        JsonNode detail = await("/v1/ui/service?name=provider", s -> s.path("endpoints").size() == 2);
        assertThat(detail.path("callers").get(0).path("from").asText()).isEqualTo("consumer");
        JsonNode endpoint = await("/v1/ui/series?service=provider&instance=provider-1",
                s -> s.path("times").size() >= 1);
        assertThat(endpoint.path("kind").asText()).isEqualTo("endpoint");
    }

    @Test
    void everySidecarIsListedReadyAndItsConfigIsReadThroughTheControlPlane() throws Exception {
        JsonNode list = await("/v1/ui/sidecars", s -> s.path("total").asInt() == 4);
        for (JsonNode s : list.path("sidecars")) {
            assertThat(s.path("ready").asBoolean()).as(s.toString()).isTrue();
            assertThat(s.path("uptimeSeconds").isNumber()).isTrue();
            assertThat(s.path("version").asText()).as(s.toString()).matches("\\d+\\.\\d+\\.\\d+.*");
        }
        JsonNode config = json("/v1/ui/sidecar-config?instance=consumer-1");
        assertThat(config.path("service").asText()).isEqualTo("consumer");
        assertThat(get("/v1/ui/sidecar-config?instance=nobody").statusCode()).isEqualTo(404);
        assertThat(json("/v1/ui/sidecars?filter=provider&limit=1").path("sidecars")).hasSize(1);
    }

    @Test
    void aStoredPolicyShowsWithTheServicesItNamesAndEachSidecarsVerdict() throws Exception {
        HttpResponse<String> put = http.send(HttpRequest.newBuilder(URI.create(mesh.base() + "/v1/policies/timeouts"))
                .header("Authorization", mesh.operatorAuthorization())
                .PUT(HttpRequest.BodyPublishers.ofString("services:\n  provider:\n    timeout: 2s\n")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(put.statusCode()).isEqualTo(200);
        JsonNode p = await("/v1/ui/policies", j -> j.path("documents").size() == 1 && j.path("sidecars").size() == 4);
        assertThat(p.path("documents").get(0).path("services").get(0).asText()).isEqualTo("provider");
        assertThat(p.path("documents").get(0).path("text").asText()).contains("timeout: 2s");
        assertThat(p.path("sidecars")).hasSize(4);
        // A document the sidecars refuse: each keeps its policies and says why, and the page shows it.
        HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create(mesh.base() + "/v1/policies/broken"))
                .header("Authorization", mesh.operatorAuthorization())
                .PUT(HttpRequest.BodyPublishers.ofString("services:\n  provider:\n    timeout: soon\n")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(bad.statusCode()).isEqualTo(200);
        try {
            JsonNode rejected = await("/v1/ui/policies", j -> {
                for (JsonNode s : j.path("sidecars")) {
                    if (!s.path("status").asText().startsWith("rejected") || s.path("rejections").asLong() < 1) {
                        return false;
                    }
                }
                return true;
            });
            assertThat(rejected.path("sidecars").get(0).path("status").asText()).contains("broken", "timeout");
        } finally {
            http.send(HttpRequest.newBuilder(URI.create(mesh.base() + "/v1/policies/broken"))
                    .header("Authorization", mesh.operatorAuthorization()).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    /**
     * Every panel of docs/grafana/weft.json, its PromQL run by a real Prometheus (Debian's) scraping this mesh's
     * sidecars: each query is valid, and each returns series once traffic flowed (load shedding only if any happened).
     */
    @Test
    void everyGrafanaPanelsQueryAnswersFromARealPrometheusScrapingTheSidecars() throws Exception {
        Path binary = Path.of("/usr/bin/prometheus");
        assertThat(binary).as("the prometheus binary (apt-get install prometheus; .ci/run installs it)").isExecutable();
        JsonNode dashboard = JSON.readTree(Path.of("../docs/grafana/weft.json").toFile());
        Path dir = Files.createTempDirectory("weft-grafana-prometheus");
        List<String> targets = new ArrayList<>();
        mesh.sidecars.forEach(s -> targets.add("'127.0.0.1:" + s.boundAddresses().get("admin").getPort() + "'"));
        Files.writeString(dir.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: weft
                    static_configs:
                      - targets: [%s]
                """.formatted(String.join(", ", targets)));
        Path log = dir.resolve("prometheus.log");
        Process prometheus = new ProcessBuilder(binary.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:0")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Pattern listening = Pattern.compile("msg=\"Listening on\" address=127\\.0\\.0\\.1:(\\d+)");
            String port = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (port == null && System.nanoTime() < deadline) {
                Matcher m = listening.matcher(Files.readString(log));
                port = m.find() ? m.group(1) : null;
                Thread.sleep(100);
            }
            assertThat(port).as("Prometheus listening within 30 s:\n" + Files.readString(log)).isNotNull();
            List<String> empty = new ArrayList<>();
            int queries = 0;
            for (JsonNode panel : dashboard.path("panels")) {
                for (JsonNode target : panel.path("targets")) {
                    String expr = target.path("expr").asText().replace("$service", ".*");
                    queries++;
                    JsonNode result = awaitPrometheus("http://127.0.0.1:" + port, expr,
                            !panel.path("title").asText().startsWith("Load shed"));
                    if (result.isEmpty()) {
                        empty.add(panel.path("title").asText() + ": " + expr);
                    }
                }
            }
            assertThat(queries).isGreaterThanOrEqualTo(15);
            assertThat(empty).allSatisfy(t -> assertThat(t).startsWith("Load shed"));
        } finally {
            prometheus.destroy();
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The query's result; with {@code needData}, polled until it has numbers (first scrapes take seconds), 45 s max. */
    private JsonNode awaitPrometheus(String prometheus, String expr, boolean needData) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
        while (true) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(prometheus + "/api/v1/query?query="
                    + URLEncoder.encode(expr, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(expr + " → " + r.body()).isEqualTo(200);
            JsonNode result = JSON.readTree(r.body()).at("/data/result");
            boolean numbers = false;
            for (JsonNode series : result) {
                numbers |= !series.at("/value/1").asText().equals("NaN");
            }
            if (!needData || numbers || System.nanoTime() > deadline) {
                return numbers ? result : JSON.createArrayNode();
            }
            Thread.sleep(500);
        }
    }

    @Test
    void weftDashboardPrintsTheUrlOfTheControlPlanesUiAndFailsWhenNothingAnswers() {
        java.io.StringWriter out = new java.io.StringWriter();
        picocli.CommandLine cli = WeftCli.commandLine("dashboard");
        cli.setOut(new java.io.PrintWriter(out));
        cli.setErr(new java.io.PrintWriter(new java.io.StringWriter()));
        int code = cli.execute("dashboard", "--registry", "weft://127.0.0.1:" + mesh.controlAddress.getPort());
        assertThat(code).isZero();
        assertThat(out.toString().strip()).isEqualTo(mesh.base() + "/ui/");
        java.io.StringWriter err = new java.io.StringWriter();
        cli = WeftCli.commandLine("dashboard");
        cli.setOut(new java.io.PrintWriter(new java.io.StringWriter()));
        cli.setErr(new java.io.PrintWriter(err, true));
        assertThat(cli.execute("dashboard", "--registry", "127.0.0.1:1")).isEqualTo(1);
        assertThat(err.toString()).contains("nothing answers there yet");
    }

    @Test
    void badParametersAreRefusedWith400AndSayWhatWasExpected() throws Exception {
        HttpResponse<String> r = get("/v1/ui/map?limit=100000");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("expected a whole number 0-500");
        assertThat(get("/v1/ui/series?service=%3Cscript%3E").statusCode()).isEqualTo(400);
        assertThat(get("/v1/ui/map?filter=%22%3E%3Cimg").statusCode()).isEqualTo(400);
        assertThat(get("/v1/ui/nothing").statusCode()).isEqualTo(404);
        // Each refusal is counted in the control plane's /metrics.
        String metrics = get("/metrics").body();
        assertThat(metrics).containsPattern("weft_control_ui_rejected_total ([4-9]|\\d\\d+)\n")
                .contains("weft_control_history_series ", "weft_control_history_unread_sidecars 0");
        assertThat(get("/ui/../pom.xml").statusCode()).isEqualTo(404);
        HttpResponse<String> page = get("/ui/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
        assertThat(page.body()).contains("app.js").doesNotContain("http://", "https://");
        assertThat(http.send(HttpRequest.newBuilder(URI.create(mesh.base() + "/v1/ui/map"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(405);
    }

    @Test
    void inHeadlessChromiumTheMapShowsTheServicesAnEdgeOpensItsChartAndATraceItsWaterfall() throws Exception {
        // Traffic for the charts and the traces first, so the pages have something to show.
        await("/v1/ui/series?from=consumer&to=provider", s -> s.path("times").size() >= 3);
        String out = BrowserScript.run("dashboard.mjs", mesh.base());
        assertThat(out).contains("map: services gateway, consumer, provider", "edge chart: consumer → provider",
                "waterfall:", "live: map refreshed");
        Path shots = Path.of("target/dashboard-screenshots");
        assertThat(shots.resolve("map.png")).exists();
        assertThat(shots.resolve("waterfall.png")).exists();
    }
}
