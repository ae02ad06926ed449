package dev.weft.dataplane.admin;

import dev.weft.dataplane.transport.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Where the admin pages are computed: on the Manager's loop, so that a scrape of /metrics never holds a Worker. */
class AdminServerTest {
    private final Transport transport = new Transport(2);
    private final AdminServer admin = new AdminServer(transport, Map.of(
            "/thread", () -> AdminServer.Reply.text(200, Thread.currentThread().getName())));

    @AfterEach
    void stop() {
        admin.close();
        transport.close();
    }

    @Test
    void everyAdminRequestIsAnsweredOnTheManagerThreadAndNeverOnAWorker() throws Exception {
        InetSocketAddress at = admin.bind(new InetSocketAddress("127.0.0.1", 0));
        for (int i = 0; i < 6; i++) { // a new client, so a new connection, each time: Workers would take turns
            try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + at.getPort() + "/thread"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).startsWith("weft-manager").doesNotContain("weft-worker");
            }
        }
    }
}
