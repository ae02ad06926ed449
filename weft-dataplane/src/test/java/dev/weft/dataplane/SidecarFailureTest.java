package dev.weft.dataplane;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What callers see when the app behind a provider sidecar misbehaves; the sidecars must keep serving. */
class SidecarFailureTest {

    @Test
    void anAppThatIsDownIsAnswered502NamingTheApp() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp consumerApp = new TestApp()) {
            TestApp app = new TestApp();
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            try (RawHttp c = new RawHttp(port)) {
                assertThat(c.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").read().status()).isEqualTo(200);
            }
            app.close();
            try (RawHttp c = new RawHttp(port)) {
                RawHttp.Response r = c.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertThat(r.status()).isEqualTo(502);
                assertThat(r.body()).contains("app at 127.0.0.1:" + app.address().getPort());
                // The connection is still usable after a 502.
                assertThat(c.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").read().status()).isEqualTo(502);
            }
            assertThat(provider.metrics().appConnectFailures.sum()).isPositive();
        }
    }

    @Test
    void anAppThatClosesMidAnswerCutsTheCallersConnectionAndTheSidecarsKeepServing() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp consumerApp = new TestApp();
             ScriptedApp app = new ScriptedApp()) {
            mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            try (RawHttp c = new RawHttp(port)) {
                c.send("GET /cut HTTP/1.1\r\nHost: x\r\n\r\n");
                assertThatThrownBy(c::read).isInstanceOf(IOException.class);
            }
            try (RawHttp c = new RawHttp(port)) {
                RawHttp.Response r = c.send("GET /before-head HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertThat(r.status()).isEqualTo(502);
                assertThat(r.body()).contains("closed the connection before answering");
            }
            try (RawHttp c = new RawHttp(port)) {
                RawHttp.Response r = c.send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.body()).isEqualTo("ok");
            }
        }
    }

    /**
     * An app written on raw sockets so it can misbehave precisely: /cut promises 100 bytes and closes after 3,
     * /before-head closes without answering, anything else answers "ok".
     */
    static final class ScriptedApp implements AutoCloseable {
        private final ServerSocket server;
        private final Thread acceptor;

        ScriptedApp() throws IOException {
            server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
            acceptor = Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        Thread.ofVirtual().start(() -> serve(s));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        java.net.InetSocketAddress address() {
            return new java.net.InetSocketAddress("127.0.0.1", server.getLocalPort());
        }

        private void serve(Socket s) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                while (true) {
                    String requestLine = readHead(in);
                    if (requestLine == null) {
                        return;
                    }
                    if (requestLine.contains("/cut")) {
                        out.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        return;
                    }
                    if (requestLine.contains("/before-head")) {
                        return;
                    }
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            } catch (IOException ignored) {
                // the test decides what a broken connection means
            }
        }

        /** Reads a request head (these tests send no bodies); returns its first line, or null at EOF. */
        private static String readHead(InputStream in) throws IOException {
            StringBuilder sb = new StringBuilder();
            int c;
            while ((c = in.read()) != -1) {
                sb.append((char) c);
                if (sb.length() >= 4 && sb.substring(sb.length() - 4).equals("\r\n\r\n")) {
                    return sb.substring(0, sb.indexOf("\r\n"));
                }
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            server.close();
            acceptor.interrupt();
        }
    }
}
