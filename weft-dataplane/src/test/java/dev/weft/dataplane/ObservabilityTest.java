package dev.weft.dataplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.dataplane.observe.ObservabilityConfig;
import dev.weft.dataplane.observe.RouteTable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Observability end to end, in this JVM: a consumer-side and a provider-side sidecar with real sockets, spans
 * collected by the embedded control plane (the default: nothing else installed), metrics at /metrics and access
 * logs on disk.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ObservabilityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CALLER_SPAN = "00f067aa0ba902b7";

    private Path logs;
    private MeshFixture mesh;
    private TestApp app;
    private TestApp consumerApp;
    private Sidecar consumer;
    private Sidecar provider;
    private HttpClient http;

    @BeforeAll
    void start() throws Exception {
        logs = Files.createTempDirectory("weft-access-logs");
        mesh = new MeshFixture("event-loop");
        mesh.observability = new ObservabilityConfig(true, true, 1.0, ObservabilityConfig.AUTO, "zipkin",
                EnumSet.of(ObservabilityConfig.Propagation.W3C, ObservabilityConfig.Propagation.B3),
                Map.of(Direction.OUTBOUND, logs.resolve("outbound.jsonl").toString(),
                        Direction.INBOUND, logs.resolve("inbound.jsonl").toString()),
                List.of(RouteTable.Route.parse("echo=/echo")));
        app = new TestApp();
        consumerApp = new TestApp();
        provider = mesh.provider("provider", "provider-1", app.address(), 1, 8);
        consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    void stop() throws Exception {
        mesh.close();
        app.close();
        consumerApp.close();
        http.close();
        try (var files = Files.list(logs)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(logs);
    }

    private HttpResponse<String> call(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + MeshFixture.port(consumer, "upstream provider") + path))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("hello"));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Polls until {@code value} is non-null, for at most 15 s. */
    private static <T> T await(String what, Supplier<T> value) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (System.nanoTime() < deadline) {
            T v = value.get();
            if (v != null) {
                return v;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out after 15 s waiting for " + what);
    }

    @Test
    void theCallersTraceReachesTheAppAndBothSidecarsReportLinkedSpansToTheControlPlane() throws Exception {
        HttpResponse<String> r = call("/echo?linked", "traceparent", "00-" + TRACE + "-" + CALLER_SPAN + "-01");
        assertThat(r.statusCode()).isEqualTo(200);

        // The app sees the same trace, as a child of the provider sidecar's span (not of the caller's).
        Map<String, List<String>> headers = app.headersOf("POST /echo?linked");
        String atApp = headers.get("traceparent").getFirst();
        assertThat(atApp).startsWith("00-" + TRACE + "-").endsWith("-01").doesNotContain(CALLER_SPAN);
        assertThat(headers.get("b3").getFirst()).startsWith(TRACE + "-");

        String base = "http://127.0.0.1:" + mesh.controlAddress.getPort();
        JsonNode spans = await("both spans at the control plane", () -> {
            try {
                JsonNode t = JSON.readTree(get(base + "/api/v2/trace/" + TRACE));
                return t.isArray() && t.size() == 2 ? t : null;
            } catch (Exception e) {
                return null;
            }
        });
        JsonNode client = null;
        JsonNode server = null;
        for (JsonNode s : spans) {
            if (s.get("kind").asText().equals("CLIENT")) {
                client = s;
            } else {
                server = s;
            }
        }
        assertThat(client).isNotNull();
        assertThat(server).isNotNull();
        assertThat(client.get("parentId").asText()).isEqualTo(CALLER_SPAN);
        assertThat(client.at("/localEndpoint/serviceName").asText()).isEqualTo("consumer");
        assertThat(client.at("/remoteEndpoint/serviceName").asText()).isEqualTo("provider");
        assertThat(server.get("parentId").asText()).isEqualTo(client.get("id").asText());
        assertThat(server.at("/localEndpoint/serviceName").asText()).isEqualTo("provider");
        assertThat(atApp).contains(server.get("id").asText());
        for (JsonNode s : List.of(client, server)) {
            assertThat(s.get("tags").get("weft.route").asText()).isEqualTo("echo");
            assertThat(s.get("tags").get("http.status_code").asText()).isEqualTo("200");
            List<String> steps = new java.util.ArrayList<>();
            s.get("annotations").forEach(a -> steps.add(a.get("value").asText()));
            assertThat(steps).containsExactly("admitted", "connected", "sent", "first-byte");
        }
        // The server side sits inside the client side: the wire and the peer's work are the gap.
        assertThat(server.get("timestamp").asLong()).isGreaterThanOrEqualTo(client.get("timestamp").asLong());
        assertThat(server.get("duration").asLong()).isLessThanOrEqualTo(client.get("duration").asLong());

        JsonNode deps = JSON.readTree(get(base + "/api/v2/dependencies?lookback=600000"));
        assertThat(deps.toString()).contains("\"parent\":\"consumer\"", "\"child\":\"provider\"");
    }

    @Test
    void aRequestWithoutContextStartsATraceAtTheConsumerSidecar() throws Exception {
        assertThat(call("/echo?without-context").statusCode()).isEqualTo(200);
        String atApp = app.headersOf("POST /echo?without-context").get("traceparent").getFirst();
        assertThat(atApp).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
        String traceId = atApp.substring(3, 35);
        String base = "http://127.0.0.1:" + mesh.controlAddress.getPort();
        JsonNode spans = await("the new trace", () -> {
            try {
                JsonNode t = JSON.readTree(get(base + "/api/v2/trace/" + traceId));
                return t.isArray() && t.size() == 2 ? t : null;
            } catch (Exception e) {
                return null;
            }
        });
        for (JsonNode s : spans) {
            if (s.get("kind").asText().equals("CLIENT")) {
                assertThat(s.has("parentId")).as("the consumer's span is the root").isFalse();
            }
        }
    }

    @Test
    void metricsNameTheDirectionDestinationRouteAndStatusClass() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(call("/echo").statusCode()).isEqualTo(200);
        }
        assertThat(call("/other").statusCode()).isEqualTo(200);
        // The client may have its answer before the sidecars have recorded it (CI saw /other missing): wait for both.
        String out = awaitMetrics(consumer, "the consumer counting /other",
                m -> m.contains("route=\"default\",status_class=\"2xx\"}") && routeRequests(m, "outbound") > 0);
        String in = awaitMetrics(provider, "the provider counting /echo", m -> routeRequests(m, "inbound") > 0);
        assertThat(out).containsPattern("weft_route_requests_total\\{direction=\"outbound\",service=\"consumer\","
                + "dst_service=\"provider\",route=\"echo\",status_class=\"2xx\"} [1-9]");
        assertThat(out).contains("dst_service=\"provider\",route=\"default\",status_class=\"2xx\"}");
        assertThat(out).as("paths are labels only through routes").doesNotContain("/other");
        assertThat(in).containsPattern("weft_route_requests_total\\{direction=\"inbound\",service=\"provider\","
                + "dst_service=\"provider\",route=\"echo\",status_class=\"2xx\"} [1-9]");
        assertThat(in).contains("weft_route_request_duration_seconds_bucket{direction=\"inbound\"");
        assertThat(out).contains("weft_endpoint_ejected{upstream=\"provider\",endpoint=\"provider-1\"} 0",
                "weft_upstream_retries_total{upstream=\"provider\"}", "weft_upstream_rate_limited_total{upstream=\"app\"}",
                "weft_upstream_timeouts_total{upstream=\"provider\"}");
        assertThat(out).contains("weft_mesh_cpu_seconds_total{scope=\"event_loops\"}", "weft_mesh_hops_total",
                "weft_spans_exported_total", "weft_traces_total{origin=\"started\"}", "weft_registered 1");
    }

    private HttpResponse<String> admin(Sidecar s, String method, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + MeshFixture.port(s, "admin") + path))
                .timeout(Duration.ofSeconds(5)).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Scrapes {@code s}'s /metrics until {@code ready} accepts the text, for at most 15 s. A sidecar counts an exchange
     * once its last byte is written, so a client holding its answer can scrape a moment before the count.
     */
    private String awaitMetrics(Sidecar s, String what, Predicate<String> ready)
            throws InterruptedException {
        return await(what, () -> {
            try {
                String m = get("http://127.0.0.1:" + MeshFixture.port(s, "admin") + "/metrics");
                return ready.test(m) ? m : null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();   // the await's sleep then ends the wait
                return null;
            } catch (Exception e) {
                return null;
            }
        });
    }

    private static long routeRequests(String metrics, String direction) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("weft_route_requests_total\\{direction=\""
                + direction + "\",[^}]*route=\"echo\",status_class=\"2xx\"} (\\d+)").matcher(metrics);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void anOperatorPausesAndResumesObservabilityOnTheAdminPortWithoutARestart() throws Exception {
        String trace = TRACE.replace('4', '7');
        String caller = "00-" + trace + "-" + CALLER_SPAN + "-01";
        try {
            assertThat(admin(consumer, "GET", "/observability").body()).isEqualTo("on\n");
            assertThat(admin(consumer, "GET", "/observability?state=off").statusCode()).as("a GET changes nothing")
                    .isEqualTo(200);
            assertThat(admin(consumer, "POST", "/observability?state=maybe").statusCode()).isEqualTo(400);
            assertThat(admin(consumer, "PUT", "/observability?state=off").statusCode()).isEqualTo(405);
            assertThat(admin(consumer, "POST", "/metrics").statusCode()).isEqualTo(405);
            for (Sidecar s : List.of(consumer, provider)) {
                HttpResponse<String> paused = admin(s, "POST", "/observability?state=off");
                assertThat(paused.statusCode()).isEqualTo(200);
                assertThat(paused.body()).isEqualTo("paused\n");
            }
            String before = get("http://127.0.0.1:" + MeshFixture.port(consumer, "admin") + "/metrics");
            assertThat(before).contains("weft_observability_paused 1");

            assertThat(call("/echo?paused", "traceparent", caller).statusCode()).isEqualTo(200);
            // Paused, the sidecars pass the caller's context through untouched, as with --tracing off.
            assertThat(app.headersOf("POST /echo?paused").get("traceparent")).containsExactly(caller);
            String during = get("http://127.0.0.1:" + MeshFixture.port(consumer, "admin") + "/metrics");
            assertThat(routeRequests(during, "outbound")).isEqualTo(routeRequests(before, "outbound"));

            for (Sidecar s : List.of(consumer, provider)) {
                assertThat(admin(s, "POST", "/observability?state=on").body()).isEqualTo("on\n");
            }
            assertThat(call("/echo?resumed", "traceparent", caller).statusCode()).isEqualTo(200);
            assertThat(app.headersOf("POST /echo?resumed").get("traceparent")).singleElement()
                    .asString().contains(trace).isNotEqualTo(caller);
            // The client may have its answer before the exchange has recorded it (CI saw one count missing): wait for it.
            String after = awaitMetrics(consumer, "the resumed request counted",
                    m -> routeRequests(m, "outbound") == routeRequests(before, "outbound") + 1);
            assertThat(after).contains("weft_observability_paused 0", "weft_observability_switches_total 2");
            for (String file : List.of("outbound.jsonl", "inbound.jsonl")) {
                await(file + " line of the resumed request", () -> {
                    try {
                        return Files.readString(logs.resolve(file)).contains("/echo?resumed") ? true : null;
                    } catch (java.io.IOException e) {
                        return null;
                    }
                });
                assertThat(Files.readString(logs.resolve(file))).as("no line while paused")
                        .doesNotContain("/echo?paused");
            }
        } finally {
            for (Sidecar s : List.of(consumer, provider)) {
                admin(s, "POST", "/observability?state=on");
            }
        }
    }

    @Test
    void accessLogsGetOneJsonLinePerRequestOnEachSide() throws Exception {
        HttpResponse<String> r = call("/echo?log=1", "traceparent", "00-" + TRACE.replace('4', '5') + "-" + CALLER_SPAN + "-01");
        assertThat(r.statusCode()).isEqualTo(200);
        String trace = TRACE.replace('4', '5');
        for (String file : List.of("outbound.jsonl", "inbound.jsonl")) {
            JsonNode line = await(file + " line", () -> {
                try {
                    for (String l : Files.readAllLines(logs.resolve(file))) {
                        if (l.contains(trace)) {
                            return JSON.readTree(l);
                        }
                    }
                } catch (Exception e) {
                    // not written yet
                }
                return null;
            });
            assertThat(line.get("path").asText()).isEqualTo("/echo?log=1");
            assertThat(line.get("route").asText()).isEqualTo("echo");
            assertThat(line.get("status").asInt()).isEqualTo(200);
            assertThat(line.get("dst_service").asText()).isEqualTo("provider");
            assertThat(line.get("bytes_in").asInt()).isEqualTo(5);
            assertThat(line.has("duration_ms")).isTrue();
        }
    }

    private static String cli(Object command, String... args) {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = new picocli.CommandLine(command).setOut(new java.io.PrintWriter(out))
                .setErr(new java.io.PrintWriter(err)).execute(args);
        assertThat(code).as(String.join(" ", args) + ": " + err).isZero();
        return out.toString();
    }

    /** The number in {@code column} (0 = name) of the table row starting with {@code name}. */
    private static double cell(String table, String name, int column) {
        for (String line : table.split("\n")) {
            if (line.startsWith(name + " ")) {
                String[] cells = line.substring(name.length()).trim().split("\\s{2,}");
                return Double.parseDouble(cells[column - 1].replace("%", "").replace(" ms", "").replace(" µs", ""));
            }
        }
        throw new AssertionError("no row '" + name + "' in:\n" + table);
    }

    @Test
    void statAndTopShowServicesAndEdgesFromLiveMetricsAndFromSpans() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread load = Thread.ofVirtual().start(() -> {
            while (!stop.get()) {
                try {
                    call("/echo");
                } catch (Exception e) {
                    return;
                }
            }
        });
        try {
            String registry = mesh.registryUrl();
            String stat = cli(new dev.weft.control.cli.StatCommand(), "--registry", registry, "--interval", "1s");
            assertThat(cell(stat, "provider", 2)).as(stat).isPositive(); // requests/s served inbound
            assertThat(cell(stat, "provider", 3)).as(stat).isEqualTo(100.0); // success %
            assertThat(cell(stat, "consumer → provider", 1)).as(stat).isPositive();
            assertThat(cell(stat, "consumer → provider", 2)).as(stat).isEqualTo(100.0);
            assertThat(stat).contains("from sidecar /metrics");

            String top = cli(new dev.weft.control.cli.TopCommand(), "--registry", registry, "--interval", "500ms",
                    "--iterations", "1", "--no-clear");
            assertThat(top).contains("weft top", "consumer → provider");

            String spans = cli(new dev.weft.control.cli.StatCommand(), "--registry", registry, "--source", "spans",
                    "--window", "1m");
            assertThat(cell(spans, "consumer → provider", 1)).as(spans).isPositive();
            assertThat(spans).contains("from collected spans");
        } finally {
            stop.set(true);
            load.join(Duration.ofSeconds(15));
        }
    }

    @Test
    void withEverythingOffTraceHeadersPassThroughUntouchedAndNoRouteMetricsExist() throws Exception {
        try (MeshFixture plain = new MeshFixture("event-loop"); TestApp plainApp = new TestApp();
             TestApp plainConsumerApp = new TestApp()) {
            plain.observability = ObservabilityConfig.off();
            plain.provider("provider", "p-1", plainApp.address(), 1, 8);
            Sidecar c = plain.consumer(plainConsumerApp.address(), List.of("provider"), false);
            String sent = "00-" + TRACE + "-" + CALLER_SPAN + "-01";
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + MeshFixture.port(c, "upstream provider") + "/echo")).timeout(Duration.ofSeconds(10))
                    .header("traceparent", sent).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(plainApp.headersOf("POST /echo").get("traceparent")).containsExactly(sent);
            assertThat(plainApp.headersOf("POST /echo")).doesNotContainKey("b3");
            String metrics = get("http://127.0.0.1:" + MeshFixture.port(c, "admin") + "/metrics");
            assertThat(metrics).contains("weft_requests_total").doesNotContain("weft_route_requests_total")
                    .doesNotContain("weft_spans_exported_total");
        }
    }
}
