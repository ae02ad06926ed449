package dev.weft.dataplane;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 16, the consumer-side row: a legal request whose fields, with those the mesh adds, are more than the WMP
 * link carries (128 fields) is refused alone, 431, and the 40 requests in flight beside it on the same mesh
 * connections all succeed. Before, the provider side answered GOAWAY on the shared connection and they failed 502.
 */
class MeshLinkLimitSocketTest {

    @Test
    void aHeadTooLargeForTheMeshLinkIsRefusedAloneWhileFortyInnocentRequestsSucceed() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp(); TestApp consumerApp = new TestApp()) {
            mesh.provider("provider", "p1", app.address(), 1, 100);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            try (RawHttp warm = new RawHttp(port)) {
                assertThat(warm.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").read().status()).isEqualTo(200);
            }

            ConcurrentLinkedQueue<String> innocent = new ConcurrentLinkedQueue<>();
            List<Thread> callers = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String target = "/slow/innocent-" + i + "?ms=500";
                callers.add(Thread.ofVirtual().start(() -> {
                    try (RawHttp c = new RawHttp(port)) {
                        RawHttp.Response r = c.send("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n").read();
                        innocent.add(r.status() + " " + r.header("x-weft-error"));
                    } catch (Exception e) {
                        innocent.add(e.toString());
                    }
                }));
            }
            // The 40 are in flight on the mesh connections once each has reached the app (which holds it 500 ms).
            await().atMost(Duration.ofSeconds(10)).until(() -> IntStream.range(0, 40)
                    .allMatch(i -> app.arrivals("GET /slow/innocent-" + i + "?ms=500") == 1));

            // 127 small fields and Host: within the listener's 128, but the mesh adds x-forwarded-for and via.
            StringBuilder head = new StringBuilder("GET /echo HTTP/1.1\r\nHost: x\r\n");
            for (int i = 0; i < 127; i++) {
                head.append("x-f").append(i).append(": v\r\n");
            }
            RawHttp.Response big;
            try (RawHttp c = new RawHttp(port)) {
                big = c.send(head.append("\r\n").toString()).read();
            }
            for (Thread t : callers) {
                t.join(30_000);
            }

            assertThat(big.status()).isEqualTo(431);
            assertThat(big.header("x-weft-error")).isEqualTo("headers-too-large");
            assertThat(big.body()).contains("mesh link");
            assertThat(innocent).hasSize(40).allMatch(s -> s.equals("200 null"), "200 without x-weft-error");
        }
    }
}
