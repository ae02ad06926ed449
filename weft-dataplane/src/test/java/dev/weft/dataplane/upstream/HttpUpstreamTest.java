package dev.weft.dataplane.upstream;

import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.transport.Transport;
import dev.weft.protocol.WmpHeaders;
import dev.weft.registry.Endpoint;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HttpUpstream}'s pool against a real HTTP/1.1 server on a loopback port (bound to port 0, the port read back):
 * which connections are reused, which are not, what a server that hangs up tells the listener, and the connection
 * cap. The server is a few lines over blocking sockets that follows a script, one line per request it reads.
 *
 * <p>Threads: calls are made on the upstream's Worker loop (as the exchange makes them), the server runs on virtual
 * threads; every wait has a timeout.
 */
class HttpUpstreamTest {
    private static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    private static final String OK_THEN_CLOSE = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    /** Script: close the connection instead of answering. */
    private static final String CLOSE = "CLOSE";
    /** Script: never answer; hold the connection until the client closes it. */
    private static final String HOLD = "HOLD";

    private final Transport transport = new Transport(1);
    private final EventLoop loop = transport.workers().next();
    private final LoopbackServer server = LoopbackServer.start();
    private final Endpoint endpoint = new Endpoint("app", "app-1", "127.0.0.1", server.port(), 1, 0, Map.of());

    @AfterEach
    void stop() {
        server.close();
        transport.close();
    }

    @Test
    void aKeepAliveConnectionIsReusedForTheNextCall() throws Exception {
        HttpUpstream upstream = new HttpUpstream(transport, "app");
        server.script.add(OK);
        server.script.add(OK);

        Recorder first = call(upstream, "GET", "/one");
        assertThat(first.body()).isEqualTo("ok");
        Recorder second = call(upstream, "GET", "/two");
        assertThat(second.body()).isEqualTo("ok");

        assertThat(server.accepted.get()).as("connections the server accepted").isEqualTo(1);
        assertThat(upstream.opened()).isEqualTo(1);
        assertThat(first.head().status()).isEqualTo(200);
        assertThat(first.head().keepAlive()).isTrue();
        String request = server.requests.poll(5, TimeUnit.SECONDS);
        assertThat(request).startsWith("GET /one HTTP/1.1\r\n");
        assertThat(request.toLowerCase(Locale.ROOT)).contains("\r\nhost: provider\r\n").contains("\r\nvia: 1.1 weft\r\n");
        assertThat(server.requests.poll(5, TimeUnit.SECONDS)).startsWith("GET /two HTTP/1.1\r\n");
    }

    @Test
    void anAnswerWithConnectionCloseIsNotReused() throws Exception {
        HttpUpstream upstream = new HttpUpstream(transport, "app");
        server.script.add(OK_THEN_CLOSE); // the server itself keeps the socket open: only the client may not reuse it
        server.script.add(OK);

        Recorder first = call(upstream, "GET", "/one");
        assertThat(first.body()).isEqualTo("ok");
        assertThat(first.head().keepAlive()).isFalse();
        assertThat(first.head().get("connection")).as("a hop-by-hop field stays on its hop").isNull();
        Recorder second = call(upstream, "GET", "/two");
        assertThat(second.body()).isEqualTo("ok");

        assertThat(server.accepted.get()).isEqualTo(2);
        assertThat(upstream.opened()).isEqualTo(2);
    }

    @Test
    void aServerThatClosesBeforeAnsweringGivesOnReset() throws Exception {
        HttpUpstream upstream = new HttpUpstream(transport, "app");
        server.script.add(CLOSE);

        Recorder r = new Recorder();
        send(open(upstream, r), "GET", "/one");

        assertThat(r.reset.get(5, TimeUnit.SECONDS)).contains("closed the connection before answering");
        assertThat(r.refused).as("it may have seen the request").isFalse();
        assertThat(r.head).isNotDone();
    }

    @Test
    void theConnectionCapFailsTheNextCallAtOnceWithCircuitOpen() throws Exception {
        HttpUpstream upstream = new HttpUpstream(transport, "app", e -> 1, Duration.ZERO);
        server.script.add(HOLD);
        Recorder busy = new Recorder();
        send(open(upstream, busy), "GET", "/slow");
        assertThat(server.requests.poll(5, TimeUnit.SECONDS)).startsWith("GET /slow");

        AtomicBoolean failedAtOnce = new AtomicBoolean();
        Future<UpstreamCall> refused = loop.submit(() -> {
            Future<UpstreamCall> f = upstream.open(loop, endpoint, endpoint.address(), new Recorder());
            failedAtOnce.set(f.isDone() && !f.isSuccess());
            return f;
        }).get(5, TimeUnit.SECONDS);

        assertThat(failedAtOnce).as("no dial, no wait").isTrue();
        assertThat(refused.cause()).isInstanceOf(Upstream.CircuitOpenException.class)
                .hasMessageContaining("already has 1 connections");
        assertThat(upstream.circuitOpen()).isEqualTo(1);
        assertThat(server.accepted.get()).isEqualTo(1);
        assertThat(upstream.opened()).isEqualTo(1);
    }

    @Test
    void anAnswerWhoseBodyStopsComingFailsWithAnswerTimeoutAndItsConnectionIsNotReused() throws Exception {
        Duration timeout = Duration.ofMillis(200);
        HttpUpstream upstream = new HttpUpstream(transport, "app", e -> 0, timeout);
        server.script.add("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf"); // 4 bytes of 10, then nothing
        server.script.add(OK);

        long start = System.nanoTime();
        Recorder stalled = new Recorder();
        send(open(upstream, stalled), "GET", "/half");

        assertThat(stalled.head().status()).isEqualTo(200);
        assertThat(stalled.reset.get(5, TimeUnit.SECONDS)).startsWith("answer-timeout: app at ")
                .contains("sent no byte of its answer for 200ms").contains("--body-timeout");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(timeout);
        assertThat(upstream.answerTimeouts()).isEqualTo(1);
        assertThat(call(upstream, "GET", "/next").body()).isEqualTo("ok");
        assertThat(server.accepted.get()).as("the stalled connection was closed, not pooled").isEqualTo(2);
    }

    @Test
    void aDialToAPortWhereNothingListensFailsWithConnectException() throws Exception {
        // Held until the dial has failed: a port picked and closed could be taken by another bind meanwhile.
        try (HeldPort closed = LoopbackPorts.held()) {
            HttpUpstream upstream = new HttpUpstream(transport, "app");
            Endpoint gone = new Endpoint("app", "gone", "127.0.0.1", closed.port(), 1, 0, Map.of());

            Future<UpstreamCall> f = loop.submit(() -> upstream.open(loop, gone, gone.address(), new Recorder()))
                    .get(5, TimeUnit.SECONDS);

            assertThat(f.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(f.cause()).isInstanceOf(Upstream.ConnectException.class)
                    .hasMessageContaining("not accepting connections");
            assertThat(upstream.connectFailures()).isEqualTo(1);
        }
    }

    // ---- calls, made on the loop as the exchange makes them ----

    private Recorder call(HttpUpstream upstream, String method, String path) throws Exception {
        Recorder r = new Recorder();
        send(open(upstream, r), method, path);
        r.body.get(5, TimeUnit.SECONDS);
        return r;
    }

    private UpstreamCall open(HttpUpstream upstream, Recorder listener) throws Exception {
        Future<UpstreamCall> f = loop.submit(() -> upstream.open(loop, endpoint, endpoint.address(), listener))
                .get(5, TimeUnit.SECONDS);
        assertThat(f.await(5, TimeUnit.SECONDS)).as("the dial ends").isTrue();
        if (!f.isSuccess()) {
            throw new AssertionError("open failed", f.cause());
        }
        return f.getNow();
    }

    private void send(UpstreamCall call, String method, String path) throws Exception {
        loop.submit(() -> {
            call.sendHead(new RequestHead(method, "provider", path, new WmpHeaders()), "provider", null,
                    Unpooled.EMPTY_BUFFER, true);
            return null;
        }).get(5, TimeUnit.SECONDS);
    }

    /** What one call was told. Buffers: each body piece is copied and released at once. */
    private static final class Recorder implements UpstreamListener {
        final CompletableFuture<ResponseHead> head = new CompletableFuture<>();
        /** The whole body, once the answer ended. */
        final CompletableFuture<String> body = new CompletableFuture<>();
        final CompletableFuture<String> reset = new CompletableFuture<>();
        private final StringBuilder received = new StringBuilder(); // the loop's only
        volatile boolean refused;

        @Override
        public void onResponseHead(ResponseHead h, ByteBuf first, boolean end) {
            head.complete(h);
            take(first, end);
        }

        @Override
        public void onResponseData(ByteBuf piece, boolean end) {
            take(piece, end);
        }

        @Override
        public void onError(dev.weft.dataplane.exchange.ExchangeError error) {
            reset.complete(error.kind() + ": " + error.getMessage());
        }

        private void take(ByteBuf piece, boolean end) {
            received.append(piece.toString(StandardCharsets.UTF_8));
            piece.release();
            if (end) {
                body.complete(received.toString());
            }
        }

        @Override
        public void onWritable() {}

        @Override
        public void onReset(String reason, boolean refused) {
            this.refused = refused;
            reset.complete(reason);
        }

        ResponseHead head() throws Exception {
            return head.get(5, TimeUnit.SECONDS);
        }

        String body() throws Exception {
            return body.get(5, TimeUnit.SECONDS);
        }
    }

    /**
     * An HTTP/1.1 server on a loopback port that reads each request (head, and a Content-Length body) and does what
     * the next line of its script says: write those bytes, {@link #CLOSE}, or {@link #HOLD}. Keeps every connection
     * open until the client closes it, so that reuse is the client's choice alone.
     */
    private static final class LoopbackServer implements AutoCloseable {
        final ServerSocket socket;
        final AtomicInteger accepted = new AtomicInteger();
        final BlockingQueue<String> script = new LinkedBlockingQueue<>();
        /** Each request head as read. */
        final BlockingQueue<String> requests = new LinkedBlockingQueue<>();
        private final List<Socket> connections = new CopyOnWriteArrayList<>();

        private LoopbackServer(ServerSocket socket) {
            this.socket = socket;
        }

        static LoopbackServer start() {
            try {
                LoopbackServer s = new LoopbackServer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
                Thread.ofVirtual().name("loopback-accept").start(s::accept);
                return s;
            } catch (IOException e) {
                throw new IllegalStateException("cannot bind a loopback port", e);
            }
        }

        int port() {
            return socket.getLocalPort();
        }

        private void accept() {
            while (!socket.isClosed()) {
                try {
                    Socket s = socket.accept();
                    accepted.incrementAndGet();
                    connections.add(s);
                    Thread.ofVirtual().name("loopback-conn").start(() -> serve(s));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void serve(Socket s) {
            try (s) {
                InputStream in = new BufferedInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                String head;
                while ((head = readHead(in)) != null) {
                    in.readNBytes(contentLength(head));
                    requests.add(head);
                    String action = script.poll(5, TimeUnit.SECONDS);
                    if (action == null || action.equals(CLOSE)) {
                        return;
                    }
                    if (action.equals(HOLD)) {
                        in.read(); // until the client closes, or the test ends
                        return;
                    }
                    out.write(action.getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the test closed the server
            }
        }

        /** The head up to and including its empty line, or null at the end of the stream. */
        private static String readHead(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int matched = 0;
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
                if (matched == 4) {
                    return head.toString(StandardCharsets.ISO_8859_1);
                }
            }
            return null;
        }

        private static int contentLength(String head) {
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    return Integer.parseInt(line.substring("content-length:".length()).trim());
                }
            }
            return 0;
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            for (Socket s : connections) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
