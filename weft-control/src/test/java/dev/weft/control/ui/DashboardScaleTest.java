package dev.weft.control.ui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlPlane;
import dev.weft.testing.SyntheticRegistrations;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard's JSON with a registry of 200 services and 2,000 endpoints (synthetic registrations through the real
 * API of a real control plane): every answer stays bounded, the map keeps the busiest services and says how many it
 * hid, the sidecar list pages, and the filters find what is hidden.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardScaleTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final ControlPlane control = new ControlPlane().historyInterval(Duration.ofMillis(200));
    private HttpClient http;
    private Path dataDir;
    private String base;

    @BeforeAll
    void start() throws Exception {
        dataDir = Files.createTempDirectory("weft-dashboard-scale");
        InetSocketAddress a = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir);
        base = "http://127.0.0.1:" + a.getPort();
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        SyntheticRegistrations.register(base, dev.weft.control.Operator.token(dataDir), 200, 10,
                Duration.ofMinutes(2));
    }

    @AfterAll
    void stop() throws Exception {
        http.close();
        control.close();
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private String send(String method, String path, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return r.body();
    }

    private JsonNode awaitSidecars() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            JsonNode j = JSON.readTree(send("GET", "/v1/ui/sidecars", null));
            if (j.path("total").asInt() == 2000 || System.nanoTime() > deadline) {
                return j;
            }
            Thread.sleep(100);
        }
    }

    @Test
    void theMapShowsTheDefaultSixtyOfTwoHundredServicesAndSaysHowManyItHid() throws Exception {
        awaitSidecars();
        String body = send("GET", "/v1/ui/map", null);
        JsonNode map = JSON.readTree(body);
        assertThat(map.path("totalServices").asInt()).isEqualTo(200);
        assertThat(map.path("services")).hasSize(UiApi.DEFAULT_NODES);
        assertThat(map.path("hiddenServices").asInt()).isEqualTo(200 - UiApi.DEFAULT_NODES);
        assertThat(map.path("services").get(0).path("instances").asInt()).isEqualTo(10);
        assertThat(body.length()).isLessThan(32 * 1024);
        String allBody = send("GET", "/v1/ui/map?limit=500", null);
        JsonNode all = JSON.readTree(allBody);
        assertThat(all.path("services")).hasSize(200);
        String sidecars = send("GET", "/v1/ui/sidecars", null);
        System.out.printf("dashboard at 200 services, 2000 endpoints: /v1/ui/map %d bytes, ?limit=500 %d bytes,"
                + " /v1/ui/sidecars %d bytes%n", body.length(), allBody.length(), sidecars.length());
        JsonNode filtered = JSON.readTree(send("GET", "/v1/ui/map?filter=svc-19", null));
        assertThat(filtered.path("services")).hasSize(10);
        assertThat(filtered.path("matchingServices").asInt()).isEqualTo(10);
    }

    @Test
    void theSidecarListPagesThroughTwoThousandRegistrationsAndSaysWhyNoneIsRead() throws Exception {
        JsonNode first = awaitSidecars();
        assertThat(first.path("total").asInt()).isEqualTo(2000);
        assertThat(first.path("sidecars")).hasSize(200);
        assertThat(first.path("sidecars").get(0).path("error").asText()).isEqualTo("registered no admin address");
        JsonNode last = JSON.readTree(send("GET", "/v1/ui/sidecars?offset=1990&limit=1000", null));
        assertThat(last.path("sidecars")).hasSize(10);
        assertThat(last.path("sidecars").get(9).path("instance").asText()).isEqualTo("svc-199-9");
        assertThat(JSON.readTree(send("GET", "/v1/ui/sidecars?filter=svc-042-", null)).path("matching").asInt())
                .isEqualTo(10);
    }
}
