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
    private final java.util.concurrent.atomic.AtomicInteger pokes = new java.util.concurrent.atomic.AtomicInteger();
    private final AdminServer admin = new AdminServer(transport, Map.of(
            "/thread", () -> AdminServer.Reply.text(200, Thread.currentThread().getName())),
            Map.of("/poke", q -> AdminServer.Reply.text(200, "poked " + pokes.incrementAndGet() + " "
                    + q.parameters().getOrDefault("by", java.util.List.of("?")).getFirst() + "\n")));

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

    private static HttpResponse<String> send(InetSocketAddress to, String method, String path) throws Exception {
        try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            return http.send(HttpRequest.newBuilder(URI.create("http://" + to.getHostString() + ":" + to.getPort()
                            + path)).timeout(Duration.ofSeconds(10))
                    .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void actionsTakePostPagesTakeGetAndEachNamesTheOtherWhenAskedWrong() throws Exception {
        InetSocketAddress at = admin.bind(new InetSocketAddress("127.0.0.1", 0));
        assertThat(send(at, "POST", "/poke?by=test").body()).isEqualTo("poked 1 test\n");
        HttpResponse<String> get = send(at, "GET", "/poke");
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(get.body()).contains("expected POST");
        assertThat(send(at, "POST", "/thread").body()).contains("expected GET");
        assertThat(pokes.get()).as("only the POST acted").isEqualTo(1);
        assertThat(send(at, "GET", "/nothing").body()).contains("unknown admin path '/nothing'", "POST /poke",
                "/thread");
    }

    @Test
    void anActionFromAnAddressOtherThanLoopbackIsRefused() throws Exception {
        // A non-loopback address of this host: the caller then connects from it, not from 127.0.0.1.
        java.net.InetAddress own = java.net.NetworkInterface.networkInterfaces()
                .filter(AdminServerTest::upAndNotLoopback)
                .flatMap(java.net.NetworkInterface::inetAddresses)
                .filter(a -> a instanceof java.net.Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress())
                .findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(own != null, "this host has no non-loopback IPv4 address");
        InetSocketAddress at = admin.bind(new InetSocketAddress(own, 0));
        HttpResponse<String> r = send(at, "POST", "/poke");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.body()).contains("only to callers on loopback");
        assertThat(pokes.get()).isZero();
        assertThat(send(at, "GET", "/thread").statusCode()).as("pages stay readable where bound").isEqualTo(200);
    }

    private static boolean upAndNotLoopback(java.net.NetworkInterface i) {
        try {
            return i.isUp() && !i.isLoopback();
        } catch (java.net.SocketException e) {
            return false;
        }
    }
}
