package dev.weft.dataplane;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An answer to HEAD carries the Content-Length of the answer a GET would get, and no body. Each hop must know the
 * body is absent from the request's method, not from the head, or it waits for bytes that never come and the
 * connection's next answer is lost. Checked over both mesh links, with an app that answers HEAD the way RFC 9110
 * allows (the JDK's test server leaves Content-Length out, which would prove nothing).
 */
class HeadRequestTest {

    @ParameterizedTest
    @ValueSource(strings = {"wmp", "http1"})
    void aHeadAnswerWithALengthAndNoBodyIsRelayedAndTheConnectionCarriesOn(String meshProtocol) throws Exception {
        try (HeadApp app = new HeadApp(); HeadApp consumerApp = new HeadApp();
             MeshFixture mesh = new MeshFixture("event-loop", meshProtocol)) {
            mesh.provider("provider", "provider-1", app.address(), 1, 8);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "upstream provider"))) {
                RawHttp.Response head = c.send("HEAD /thing HTTP/1.1\r\nHost: x\r\n\r\n").readHead();
                assertThat(head.status()).isEqualTo(200);
                assertThat(head.header("content-length")).isEqualTo(String.valueOf(HeadApp.body("GET", "/thing").length));
                RawHttp.Response get = c.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertThat(get.status()).isEqualTo(200);
                assertThat(get.body()).isEqualTo("ok GET /after");
            }
        }
    }

    @Test
    void theSidecarsOwnErrorAnswerToHeadHasNoBodyAndTheConnectionCarriesOn() throws Exception {
        try (HeadApp consumerApp = new HeadApp(); MeshFixture mesh = new MeshFixture("event-loop")) {
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of(), true);
            try (RawHttp c = new RawHttp(MeshFixture.port(consumer, "outbound"))) {
                // A service nobody registered: the sidecar answers 503 itself and keeps the connection.
                RawHttp.Response head = c.send("HEAD /x HTTP/1.1\r\nHost: nosuch\r\n\r\n").readHead();
                assertThat(head.status()).isEqualTo(503);
                assertThat(head.header("x-weft-error")).isEqualTo("unknown-service");
                assertThat(head.header("connection")).isNull();
                assertThat(Integer.parseInt(head.header("content-length"))).isPositive();
                RawHttp.Response next = c.send("GET /x HTTP/1.1\r\nHost: nosuch\r\n\r\n").read();
                assertThat(next.status()).as("the next answer, not the HEAD's body read as one").isEqualTo(503);
                assertThat(next.body()).contains("unknown service 'nosuch'");
            }
        }
    }

    /** A keep-alive HTTP/1.1 app on a plain socket: "ok METHOD TARGET" to anything, the head alone to HEAD. */
    private static final class HeadApp implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());

        HeadApp() throws IOException {
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        Thread.ofVirtual().start(() -> serve(s));
                    } catch (IOException e) {
                        return; // closed
                    }
                }
            });
        }

        static byte[] body(String method, String target) {
            return ("ok " + method + " " + target).getBytes(StandardCharsets.UTF_8);
        }

        InetSocketAddress address() {
            return new InetSocketAddress("127.0.0.1", server.getLocalPort());
        }

        private void serve(Socket s) {
            try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1))) {
                s.setSoTimeout(30_000);
                OutputStream out = s.getOutputStream();
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.isEmpty()) {
                        continue;
                    }
                    String[] start = line.split(" ");
                    long length = 0;
                    String h;
                    while ((h = in.readLine()) != null && !h.isEmpty()) {
                        if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                            length = Long.parseLong(h.substring(15).trim());
                        }
                    }
                    in.skip(length);
                    boolean head = start[0].equals("HEAD");
                    byte[] body = body(head ? "GET" : start[0], start[1]);
                    out.write(("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: " + body.length
                            + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    if (!head) {
                        out.write(body);
                    }
                    out.flush();
                }
            } catch (IOException e) {
                // the sidecar closed the connection
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
