package dev.weft.dataplane;

import dev.weft.dataplane.http.Http1RequestDecoder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The request-head timeout over real sockets ({@code --request-head-timeout}, here 1 s): a client that trickles its
 * head gets 408 {@code request-timeout} and a closed connection, on the consumer side's listener and on the provider
 * side's (an HTTP/1.1 peer); a keep-alive connection idle for longer between requests is not touched. Every wait is
 * bounded by RawHttp's 15 s read timeout and asserted well under it. And the flag itself.
 */
class RequestHeadTimeoutTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    @Test
    void aClientTricklingItsHeadIsAnswered408AndClosedOnBothListeners() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp()) {
            mesh.requestHeadTimeout = TIMEOUT;
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            for (Sidecar s : List.of(consumer, provider)) {
                int port = MeshFixture.port(s, s == consumer ? "upstream provider" : "inbound");
                try (RawHttp c = new RawHttp(port)) {
                    long start = System.nanoTime();
                    for (String piece : List.of("GET /e", "ch", "o HT", "TP/1.1\r\nHo")) { // 300 ms of trickle
                        c.send(piece);
                        Thread.sleep(100);
                    }
                    RawHttp.Response r = c.read();
                    Duration took = Duration.ofNanos(System.nanoTime() - start);

                    assertThat(r.status()).isEqualTo(408);
                    assertThat(r.header("x-weft-error")).isEqualTo("request-timeout");
                    assertThat(r.body()).contains("request head was not complete 1s after its first byte")
                            .contains("--request-head-timeout");
                    assertThat(c.closedByPeer()).as("closed after the 408").isTrue();
                    assertThat(took).isGreaterThanOrEqualTo(TIMEOUT).isLessThan(Duration.ofSeconds(10));
                }
                String metrics = get(MeshFixture.port(s, "admin"), "/metrics").body();
                assertThat(metrics).contains("weft_http_rejected_total{reason=\"request_timeout\"} 1");
            }
            assertThat(app.served.get()).as("nothing reached the app").isZero();
        }
    }

    @Test
    void aKeepAliveConnectionIdleLongerThanTheTimeoutServesItsNextRequest() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp()) {
            mesh.requestHeadTimeout = TIMEOUT;
            mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                String request = "GET /echo HTTP/1.1\r\nHost: provider\r\n\r\n";
                assertThat(c.send(request).read().status()).isEqualTo(200);
                Thread.sleep(TIMEOUT.toMillis() * 2);
                assertThat(c.send(request).read().status()).isEqualTo(200);
            }
            String metrics = get(MeshFixture.port(consumer, "admin"), "/metrics").body();
            assertThat(metrics).contains("weft_http_rejected_total{reason=\"request_timeout\"} 0");
        }
    }

    @Test
    void theFlagTakesADurationOrZeroForNoLimitAndDefaultsToTenSeconds() {
        assertThat(flag()).isEqualTo(Http1RequestDecoder.DEFAULT_HEAD_TIMEOUT).isEqualTo(Duration.ofSeconds(10));
        assertThat(flag("--request-head-timeout", "2.5s")).isEqualTo(Duration.ofMillis(2500));
        assertThat(flag("--request-head-timeout", "0")).isZero();
        assertThat(flag("--request-head-timeout", "0s")).isZero();
        assertThatThrownBy(() -> flag("--request-head-timeout", "10"))
                .hasMessageContaining("--request-head-timeout").hasMessageContaining("expected a duration such as");
    }

    private static Duration flag(String... flags) {
        return SidecarFlags.parse(flags).requestHeadTimeout;
    }

    private static RawHttp.Response get(int port, String path) throws Exception {
        try (RawHttp c = new RawHttp(port)) {
            return c.send("GET " + path + " HTTP/1.1\r\nHost: provider\r\n\r\n").read();
        }
    }
}
