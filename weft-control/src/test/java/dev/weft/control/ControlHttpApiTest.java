package dev.weft.control;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The HTTP API as curl or any other client sees it: status codes, JSON bodies, error messages, watch streams. */
class ControlHttpApiTest {
    /** For waits that only check something happens; generous because a loaded CI machine can stall a cold JVM. */
    private static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    Path dataDir;
    private ControlPlane control;
    private int port;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(1)).build();
    private final List<Stream<String>> streams = new ArrayList<>();

    private void start(Duration heartbeat) throws Exception {
        control = new ControlPlane(heartbeat);
        port = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir).getPort();
    }

    @AfterEach
    void stop() {
        streams.forEach(Stream::close);
        http.shutdownNow();
        if (control != null) {
            control.close();
        }
    }

    record Reply(int status, JsonNode json) {}

    private Reply send(String method, String path, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5))
                // The operator token the control plane generated in its data dir: writes need credentials.
                .header("Authorization", Operator.header(dataDir))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), ControlJson.MAPPER.readTree(r.body()));
    }

    private String lease(long ttlMillis) throws Exception {
        Reply r = send("PUT", "/v1/leases", "{\"ttlMillis\": " + ttlMillis + "}");
        assertThat(r.status()).as(r.json().toString()).isEqualTo(200);
        return r.json().get("leaseId").asText();
    }

    private Reply putEndpoint(String service, String id, int port, String leaseId) throws Exception {
        return send("PUT", "/v1/services/" + service + "/endpoints/" + id,
                "{\"host\": \"127.0.0.1\", \"port\": " + port + ", \"leaseId\": \"" + leaseId + "\"}");
    }

    /** Opens a watch and feeds its lines into a queue from a virtual thread. */
    private BlockingQueue<JsonNode> watch(String query) throws Exception {
        HttpResponse<Stream<String>> r = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/v1/watch/" + query)).build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).contains("ndjson"));
        streams.add(r.body());
        BlockingQueue<JsonNode> lines = new LinkedBlockingQueue<>();
        Thread.ofVirtual().start(() -> {
            try {
                r.body().forEach(line -> {
                    try {
                        lines.add(ControlJson.MAPPER.readTree(line));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            } catch (RuntimeException e) {
                // stream closed by the test
            }
        });
        return lines;
    }

    private static JsonNode nextSnapshot(BlockingQueue<JsonNode> lines, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            JsonNode line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || line.get("type").asText().equals("snapshot")) {
                return line;
            }
        }
    }

    private static List<String> ids(JsonNode snapshot) {
        List<String> ids = new ArrayList<>();
        snapshot.get("endpoints").forEach(e -> ids.add(e.get("id").asText()));
        return ids;
    }

    @Test
    void a_watch_sends_the_current_snapshot_at_once_then_one_line_per_change() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        String lease = lease(30_000);
        putEndpoint("provider", "p1", 7001, lease);

        BlockingQueue<JsonNode> lines = watch("provider");
        JsonNode first = nextSnapshot(lines, WAIT);
        assertThat(ids(first)).containsExactly("p1");

        putEndpoint("provider", "p2", 7002, lease);
        JsonNode second = nextSnapshot(lines, WAIT);
        assertThat(ids(second)).containsExactly("p1", "p2");
        assertThat(second.get("revision").asLong()).isGreaterThan(first.get("revision").asLong());

        assertThat(send("DELETE", "/v1/services/provider/endpoints/p1", null).status()).isEqualTo(200);
        assertThat(ids(nextSnapshot(lines, WAIT))).containsExactly("p2");
    }

    @Test
    void a_watch_resumed_at_the_current_revision_waits_for_the_next_change() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        String lease = lease(30_000);
        long revision = putEndpoint("provider", "p1", 7001, lease).json().get("revision").asLong();

        BlockingQueue<JsonNode> lines = watch("provider?revision=" + revision);
        assertThat(nextSnapshot(lines, Duration.ofMillis(300))).isNull();

        putEndpoint("provider", "p2", 7002, lease);
        assertThat(ids(nextSnapshot(lines, WAIT))).containsExactly("p1", "p2");
    }

    @Test
    void a_watch_from_a_revision_this_registry_never_reached_gets_a_snapshot_at_once() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);

        BlockingQueue<JsonNode> lines = watch("provider?revision=999");

        JsonNode snapshot = nextSnapshot(lines, WAIT);
        assertThat(snapshot).isNotNull();
        assertThat(ids(snapshot)).isEmpty();
    }

    @Test
    void a_quiet_watch_stream_carries_heartbeat_lines() throws Exception {
        start(Duration.ofMillis(100));

        BlockingQueue<JsonNode> lines = watch("provider");

        assertThat(lines.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS).get("type").asText()).isEqualTo("snapshot");
        JsonNode next = lines.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next).isNotNull();
        assertThat(next.get("type").asText()).isEqualTo("heartbeat");
    }

    @Test
    void an_expired_lease_takes_its_endpoints_away_and_watchers_hear_within_250_ms() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        BlockingQueue<JsonNode> lines = watch("provider");
        assertThat(nextSnapshot(lines, WAIT)).isNotNull();
        long ttlMillis = 300;

        String lease = lease(ttlMillis);
        long granted = System.nanoTime();   // the lease started before this, so it expires before granted + ttl
        putEndpoint("provider", "p1", 7001, lease);
        assertThat(ids(nextSnapshot(lines, WAIT))).containsExactly("p1");

        JsonNode gone = nextSnapshot(lines, WAIT);
        long heardAfterExpiry = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - granted) - ttlMillis;
        assertThat(ids(gone)).isEmpty();
        assertThat(heardAfterExpiry).isLessThan(250);
        assertThat(send("PUT", "/v1/leases/" + lease + "/keepalive", null).status()).isEqualTo(404);
    }

    @Test
    void keepalive_answers_with_the_lease_and_404_naming_an_unknown_lease() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        String lease = lease(5_000);
        putEndpoint("provider", "p1", 7001, lease);

        Reply ok = send("PUT", "/v1/leases/" + lease + "/keepalive", null);
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.json().get("ttlMillis").asLong()).isEqualTo(5_000);
        assertThat(ok.json().get("endpoints").asInt()).isEqualTo(1);

        Reply unknown = send("PUT", "/v1/leases/feedbeef/keepalive", null);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.json().get("code").asText()).isEqualTo("unknown-lease");
        assertThat(unknown.json().get("error").asText()).contains("'feedbeef'");
    }

    @Test
    void bad_requests_are_refused_with_400_saying_what_was_expected() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);

        Reply misspelt = send("PUT", "/v1/leases", "{\"ttlMilis\": 3000}");
        assertThat(misspelt.status()).isEqualTo(400);
        assertThat(misspelt.json().get("error").asText()).contains("unknown field 'ttlMilis'").contains("ttlMillis");

        Reply tooShort = send("PUT", "/v1/leases", "{\"ttlMillis\": 5}");
        assertThat(tooShort.status()).isEqualTo(400);
        assertThat(tooShort.json().get("error").asText()).contains("ttlMillis out of range: 5");

        Reply notJson = send("PUT", "/v1/leases", "{ttl");
        assertThat(notJson.status()).isEqualTo(400);
        assertThat(notJson.json().get("error").asText()).startsWith("invalid JSON body");

        Reply badPort = send("PUT", "/v1/services/provider/endpoints/p1",
                "{\"host\": \"127.0.0.1\", \"port\": 70000, \"leaseId\": \"" + lease(5_000) + "\"}");
        assertThat(badPort.status()).isEqualTo(400);
        assertThat(badPort.json().get("error").asText()).contains("port out of range: 70000");

        Reply badName = send("GET", "/v1/services/bad%20name", null);
        assertThat(badName.status()).isEqualTo(400);
        assertThat(badName.json().get("error").asText()).contains("invalid service name 'bad name'");

        Reply badRevision = send("GET", "/v1/watch/provider?revision=soon", null);
        assertThat(badRevision.status()).isEqualTo(400);
        assertThat(badRevision.json().get("error").asText()).contains("invalid revision 'soon'");
    }

    @Test
    void registering_under_an_unknown_lease_is_refused_with_404() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);

        Reply r = putEndpoint("provider", "p1", 7001, "0000");

        assertThat(r.status()).isEqualTo(404);
        assertThat(r.json().get("code").asText()).isEqualTo("unknown-lease");
    }

    @Test
    void unknown_paths_wrong_methods_and_unknown_endpoints_say_what_exists() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);

        Reply noRoute = send("GET", "/v2/services", null);
        assertThat(noRoute.status()).isEqualTo(404);
        assertThat(noRoute.json().get("error").asText()).contains("GET /v1/services");

        Reply wrongMethod = send("POST", "/v1/services", null);
        assertThat(wrongMethod.status()).isEqualTo(405);
        assertThat(wrongMethod.json().get("error").asText()).contains("allowed: GET");

        putEndpoint("provider", "p1", 7001, lease(5_000));
        Reply unknownEndpoint = send("DELETE", "/v1/services/provider/endpoints/p9", null);
        assertThat(unknownEndpoint.status()).isEqualTo(404);
        assertThat(unknownEndpoint.json().get("error").asText()).contains("no endpoint 'p9'").contains("known: p1");
    }

    @Test
    void pipelined_requests_are_answered_in_the_order_they_were_sent() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            // The first goes to the store thread, the second is refused on the spot: without flow control the
            // refusal would overtake the answer.
            String requests = "GET /v1/services/provider HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /v2/nothing HTTP/1.1\r\nHost: x\r\n\r\n";
            socket.getOutputStream().write(requests.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();

            StringBuilder received = new StringBuilder();
            byte[] buf = new byte[4096];
            while (!(received.indexOf("snapshot") >= 0 && received.indexOf("no route") >= 0)) {
                int n = socket.getInputStream().read(buf);
                assertThat(n).as("connection closed early; got: " + received).isPositive();
                received.append(new String(buf, 0, n, StandardCharsets.UTF_8));
            }
            assertThat(received.indexOf("snapshot")).isLessThan(received.indexOf("no route"));
        }
    }

    @Test
    void services_are_listed_with_their_endpoint_counts_and_a_revision() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        String lease = lease(5_000);
        putEndpoint("provider", "p1", 7001, lease);
        putEndpoint("provider", "p2", 7002, lease);
        putEndpoint("consumer", "c1", 7101, lease);

        Reply r = send("GET", "/v1/services", null);

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("revision").asLong()).isEqualTo(3);
        assertThat(r.json().get("services").toString())
                .isEqualTo("[{\"name\":\"consumer\",\"endpoints\":1,\"revision\":3},"
                        + "{\"name\":\"provider\",\"endpoints\":2,\"revision\":2}]");
        assertThat(send("GET", "/v1/health", null).json().get("status").asText()).isEqualTo("ok");
    }

    @Test
    void health_and_metrics_name_the_embedded_store_and_its_data_dir() throws Exception {
        start(ControlPlane.DEFAULT_WATCH_HEARTBEAT);
        putEndpoint("provider", "p1", 7001, lease(5_000));

        JsonNode health = send("GET", "/v1/health", null).json();
        assertThat(health.get("backend").asText()).isEqualTo("embedded");
        assertThat(health.get("dataDir").asText()).isEqualTo(dataDir.toAbsolutePath().normalize().toString());
        assertThat(health.get("services").asInt()).isEqualTo(1);
        assertThat(health.get("leases").asInt()).isEqualTo(1);
        assertThat(health.get("errors").asLong()).isZero();

        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("weft_control_registry_up{backend=\"embedded\"} 1\n",
                "weft_control_registry_errors_total{backend=\"embedded\"} 0\n");
    }
}
