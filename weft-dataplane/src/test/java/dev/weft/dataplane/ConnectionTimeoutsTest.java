package dev.weft.dataplane;

import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 16's idle keep-alive and body-progress timeouts over real sockets, with timeouts of 300 ms set through the
 * config builder: an idle client connection is closed quietly after the timeout, and never while its request waits
 * on a slow app; a request body that stops coming is answered 408 and the app sees its request end; an answer body
 * that stops coming is cut, by the provider side reading the app or by the consumer side reading an {@code http1}
 * peer; bodies that keep coming, however slowly in total, pass; each is counted. The app is a
 * few lines over plain sockets that misbehaves on purpose ({@link RawApp}). Every wait is bounded: RawHttp's reads
 * by its 15 s socket timeout, the app's by 20 s, polls by 10 s.
 */
class ConnectionTimeoutsTest {
    private static final Duration TIMEOUT = Duration.ofMillis(300);
    private static final Duration BOUND = Duration.ofSeconds(10);

    @Test
    void anIdleClientConnectionIsClosedQuietlyAfterTheTimeoutButNeverWhileASlowAppAnswers() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); RawApp app = new RawApp(); TestApp consumerApp = new TestApp()) {
            mesh.idleTimeout = TIMEOUT;
            mesh.bodyTimeout = TIMEOUT;
            mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                RawHttp.Response r = c.send("GET /slow HTTP/1.1\r\nHost: provider\r\n\r\n").read();
                assertThat(r.status()).as("answered after three times every timeout").isEqualTo(200);
                assertThat(r.body()).isEqualTo("slow");

                long idleFrom = System.nanoTime();
                assertThat(c.closedByPeer()).as("closed, with not a byte sent: the client asked nothing").isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - idleFrom)).isGreaterThanOrEqualTo(TIMEOUT)
                        .isLessThan(BOUND);
            }
            assertThat(metrics(consumer)).contains("weft_connections_closed_total{reason=\"idle\"} 1");
        }
    }

    @Test
    void theInboundListenerClosesAnIdleHttp1PeerAndAConnectionThatNeverSendsAByte() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); RawApp app = new RawApp()) {
            mesh.idleTimeout = TIMEOUT;
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            int inbound = MeshFixture.port(provider, "inbound");
            try (RawHttp silent = new RawHttp(inbound); RawHttp peer = new RawHttp(inbound)) {
                long start = System.nanoTime();
                assertThat(peer.send("GET /fast HTTP/1.1\r\nHost: provider\r\n\r\n").read().status()).isEqualTo(200);
                assertThat(peer.closedByPeer()).as("the HTTP/1.1 peer, idle after its answer").isTrue();
                assertThat(silent.closedByPeer()).as("a connection that never sent its first byte").isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(TIMEOUT)
                        .isLessThan(BOUND);
            }
            assertThat(metrics(provider)).contains("weft_connections_closed_total{reason=\"idle\"} 2");
        }
    }

    @Test
    void aClientThatStopsHalfwayThroughItsBodyGets408AndTheAppSeesItsRequestEnd() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); RawApp app = new RawApp(); TestApp consumerApp = new TestApp()) {
            mesh.bodyTimeout = TIMEOUT;
            mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                long start = System.nanoTime();
                c.send("POST /upload HTTP/1.1\r\nHost: provider\r\nContent-Length: 1000\r\n\r\n" + "x".repeat(500));
                RawHttp.Response r = c.read();
                Duration took = Duration.ofNanos(System.nanoTime() - start);

                assertThat(r.status()).isEqualTo(408);
                assertThat(r.header("x-weft-error")).isEqualTo("body-timeout");
                assertThat(r.body()).contains("no byte of the request body arrived for 300ms").contains("--body-timeout");
                assertThat(c.closedByPeer()).as("closed after the 408").isTrue();
                assertThat(took).isGreaterThanOrEqualTo(TIMEOUT).isLessThan(BOUND);
            }
            awaitEquals(app.uploadsAborted::get, 1, "the app saw its request end mid-body");
            assertThat(app.uploadsStarted.get()).as("the head and half the body had reached the app").isEqualTo(1);
            assertThat(app.uploadsCompleted.get()).isZero();
            assertThat(metrics(consumer)).contains("weft_http_rejected_total{reason=\"body_timeout\"} 1")
                    .contains("weft_rejected_total{boundary=\"http1_listener\",reason=\"body_timeout\"} 1")
                    // Recorded as what the client was told, not as a client that went away (499).
                    .containsPattern("weft_route_mesh_errors_total\\{[^}]*kind=\"body-timeout\"} 1")
                    .doesNotContain("kind=\"downstream-closed\"");
        }
    }

    @Test
    void aBodyThatKeepsComingPassesHoweverLongItTakesInAll() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); RawApp app = new RawApp(); TestApp consumerApp = new TestApp()) {
            // Twice the other tests' timeout: the gaps of a tenth of a second must not pass for stalls on a busy machine.
            mesh.idleTimeout = TIMEOUT.multipliedBy(2);
            mesh.bodyTimeout = TIMEOUT.multipliedBy(2);
            mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                c.send("POST /upload HTTP/1.1\r\nHost: provider\r\nContent-Length: 1000\r\n\r\n");
                for (int i = 0; i < 10; i++) { // a second in all, longer than the timeout, a tenth of a second per piece
                    Thread.sleep(100);
                    c.send("y".repeat(100));
                }
                RawHttp.Response upload = c.read();
                assertThat(upload.status()).isEqualTo(200);
                assertThat(upload.body()).isEqualTo("got 1000");

                RawHttp.Response drip = c.send("GET /drip HTTP/1.1\r\nHost: provider\r\n\r\n").read();
                assertThat(drip.status()).as("an answer of a byte a tenth of a second, for a second").isEqualTo(200);
                assertThat(drip.body()).isEqualTo("0123456789");
            }
            assertThat(metrics(consumer)).contains("weft_http_rejected_total{reason=\"body_timeout\"} 0");
        }
    }

    @Test
    void anAppThatStallsHalfwayThroughItsAnswerHasTheAnswerCutAndItsConnectionClosed() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); RawApp app = new RawApp(); TestApp consumerApp = new TestApp()) {
            mesh.bodyTimeout = TIMEOUT;
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                long start = System.nanoTime();
                c.send("GET /half HTTP/1.1\r\nHost: provider\r\n\r\n");
                // The head went out with the first half: all that is left to say is a closed connection.
                assertThatThrownBy(c::read).isInstanceOf(EOFException.class).hasMessageContaining("500 of 1000 bytes");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(TIMEOUT)
                        .isLessThan(BOUND);
            }
            awaitEquals(app.answersCut::get, 1, "the app's connection closed under its stalled answer");
            assertThat(metrics(provider)).contains("weft_upstream_answer_timeouts_total{upstream=\"app\"} 1");
            assertThat(metrics(consumer)).contains("weft_streams_reset_total 1");
        }
    }

    @Test
    void anHttp1PeerWhoseAnswerStallsIsCutByTheConsumerSideItself() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop", "http1"); RawApp app = new RawApp();
             TestApp consumerApp = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10); // its own: the default, 60 s
            mesh.bodyTimeout = TIMEOUT;
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                c.send("GET /half HTTP/1.1\r\nHost: provider\r\n\r\n");
                assertThatThrownBy(c::read).isInstanceOf(EOFException.class).hasMessageContaining("500 of 1000 bytes");
            }
            awaitEquals(app.answersCut::get, 1, "the cut reached the app through the provider side");
            assertThat(metrics(consumer)).contains("weft_upstream_answer_timeouts_total{upstream=\"peer_sidecars\"} 1");
            assertThat(metrics(provider)).contains("weft_upstream_answer_timeouts_total{upstream=\"app\"} 0");
        }
    }

    @Test
    void theFlagsTakeADurationOrZeroForNoLimitWithDefaultsOfNginxsOrder() {
        SidecarCommand byDefault = SidecarFlags.parse();
        assertThat(byDefault.idleTimeout).isEqualTo(Duration.ofSeconds(75));
        assertThat(byDefault.bodyTimeout).isEqualTo(Duration.ofSeconds(60));
        SidecarCommand set = SidecarFlags.parse("--idle-timeout", "0", "--body-timeout", "1.5s");
        assertThat(set.idleTimeout).isZero();
        assertThat(set.bodyTimeout).isEqualTo(Duration.ofMillis(1500));
        assertThat(set.config().timeouts().body()).isEqualTo(Duration.ofMillis(1500));
        assertThatThrownBy(() -> SidecarFlags.parse("--body-timeout", "30"))
                .hasMessageContaining("--body-timeout").hasMessageContaining("expected a duration such as");
    }

    private static String metrics(Sidecar s) throws IOException {
        try (RawHttp c = new RawHttp(MeshFixture.port(s, "admin"))) {
            return c.send("GET /metrics HTTP/1.1\r\nHost: admin\r\n\r\n").read().body();
        }
    }

    private static void awaitEquals(IntSupplier value, int expected, String what) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (value.getAsInt() != expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(value.getAsInt()).as(what).isEqualTo(expected);
    }

    /**
     * An app over plain sockets on a loopback port, keep-alive, one virtual thread per connection, that answers by
     * path: {@code /upload} reads its Content-Length body and answers {@code got N}, or counts the request as aborted
     * when the body ends first; {@code /half} sends a head for 1,000 bytes and 500 of them, then waits for the
     * connection to close; {@code /drip} sends 10 bytes a tenth of a second apart; {@code /slow} answers after
     * three times the timeout; anything else answers {@code ok} at once.
     */
    private static final class RawApp implements AutoCloseable {
        final ServerSocket server;
        final AtomicInteger uploadsStarted = new AtomicInteger();
        final AtomicInteger uploadsCompleted = new AtomicInteger();
        final AtomicInteger uploadsAborted = new AtomicInteger();
        final AtomicInteger answersCut = new AtomicInteger();

        RawApp() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().name("raw-app-accept").start(this::accept);
        }

        InetSocketAddress address() {
            return new InetSocketAddress("127.0.0.1", server.getLocalPort());
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread.ofVirtual().name("raw-app-conn").start(() -> serve(s));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void serve(Socket s) {
            try (s) {
                s.setSoTimeout(20_000);
                InputStream in = new BufferedInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                List<String> head;
                while (!(head = head(in)).isEmpty()) {
                    String path = head.getFirst().split(" ")[1];
                    int length = contentLength(head);
                    if (path.equals("/upload")) {
                        uploadsStarted.incrementAndGet();
                        if (!readFully(in, length)) {
                            uploadsAborted.incrementAndGet();
                            return;
                        }
                        uploadsCompleted.incrementAndGet();
                        answer(out, "got " + length);
                        continue;
                    }
                    readFully(in, length);
                    switch (path) {
                        case "/half" -> {
                            send(out, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + "h".repeat(500));
                            if (!readFully(in, 1)) {
                                answersCut.incrementAndGet();
                            }
                            return;
                        }
                        case "/drip" -> {
                            send(out, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
                            for (int i = 0; i < 10; i++) {
                                Thread.sleep(100);
                                send(out, Integer.toString(i));
                            }
                        }
                        case "/slow" -> {
                            Thread.sleep(TIMEOUT.toMillis() * 3);
                            answer(out, "slow");
                        }
                        default -> answer(out, "ok");
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the sidecar closed the connection, or the test ended
            }
        }

        /** The head's lines, request line first; empty at the end of the stream (readiness probes send nothing). */
        private static List<String> head(InputStream in) throws IOException {
            List<String> lines = new java.util.ArrayList<>();
            StringBuilder line = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0) {
                if (b != '\n') {
                    line.append((char) b);
                } else if (line.length() <= 1) { // CRLF alone: the end of the head
                    return lines;
                } else {
                    lines.add(line.substring(0, line.length() - 1));
                    line.setLength(0);
                }
            }
            return List.of();
        }

        private static int contentLength(List<String> head) {
            for (String l : head) {
                if (l.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    return Integer.parseInt(l.substring(l.indexOf(':') + 1).trim());
                }
            }
            return 0;
        }

        /** Reads {@code n} bytes; false if the connection ended (closed or reset) first. */
        private static boolean readFully(InputStream in, int n) {
            try {
                return in.readNBytes(n).length == n;
            } catch (IOException e) {
                return false;
            }
        }

        private static void answer(OutputStream out, String body) throws IOException {
            send(out, "HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
        }

        private static void send(OutputStream out, String s) throws IOException {
            out.write(s.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
