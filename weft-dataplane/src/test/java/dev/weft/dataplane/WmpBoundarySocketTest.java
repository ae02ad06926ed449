package dev.weft.dataplane;

import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameDecoder;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A peer that speaks WMP badly, over a real socket to a real provider sidecar and its app: a request the boundary
 * refuses resets its own stream only and never reaches the app (issue 16, rows 1 to 3), and a frame that breaks the
 * stream rules ends the connection with GOAWAY PROTOCOL_ERROR naming the last stream processed. The peer is a plain
 * socket; frames are made and read with the production WMP codec in EmbeddedChannels, so it can send what no sidecar
 * would.
 */
class WmpBoundarySocketTest {

    /** A WMP connection from a plain socket; every read waits at most 10 s. */
    private static final class RawPeer implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final EmbeddedChannel encoder = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
        private final EmbeddedChannel decoder = new EmbeddedChannel(new WmpFrameDecoder(WmpLimits.defaults(), new WmpCodecMetrics()));

        RawPeer(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout(10_000);
            in = socket.getInputStream();
        }

        void send(WmpFrame frame) throws IOException {
            encoder.writeOutbound(frame);
            ByteBuf b;
            while ((b = encoder.readOutbound()) != null) {
                try {
                    byte[] bytes = new byte[b.readableBytes()];
                    b.readBytes(bytes);
                    socket.getOutputStream().write(bytes);
                } finally {
                    b.release();
                }
            }
        }

        /** The next frame from the sidecar (its body copied out and released), or null at end of stream. */
        WmpFrame read() throws IOException {
            byte[] buf = new byte[8192];
            while (true) {
                WmpFrame f = decoder.readInbound();
                if (f != null) {
                    f.release(); // records keep their fields; tests read status, ids and codes only
                    return f;
                }
                int n = in.read(buf);
                if (n < 0) {
                    return null;
                }
                decoder.writeInbound(Unpooled.copiedBuffer(buf, 0, n));
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            encoder.finishAndReleaseAll();
            decoder.finishAndReleaseAll();
        }
    }

    private static WmpHeaders fields(String... pairs) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    private static WmpRequest get(int stream, String path, WmpHeaders fields) {
        return new WmpRequest(stream, true, "GET", "provider", path, fields, Unpooled.EMPTY_BUFFER);
    }

    /** Reads frames until the one that ends {@code stream}'s answer; returns its status. */
    private static int status(RawPeer peer, int stream) throws IOException {
        int status = 0;
        for (WmpFrame f; (f = peer.read()) != null; ) {
            if (f instanceof WmpResponse r && r.streamId() == stream) {
                status = r.status();
                if (r.endStream()) {
                    return status;
                }
            } else if (f instanceof WmpData d && d.streamId() == stream && d.endStream()) {
                return status;
            }
        }
        throw new AssertionError("the connection ended before stream " + stream + " was answered");
    }

    @Test
    void aRequestThatInjectsAHeaderLineIsResetAloneAndNeverReachesTheApp() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            try (RawPeer peer = new RawPeer(MeshFixture.port(provider, "inbound"))) {
                peer.send(get(1, "/echo", fields("x-a", "1\r\nx-injected: yes")));
                peer.send(get(3, "http://evil.example/echo", fields()));
                peer.send(get(5, "/echo", fields("transfer-encoding", "chunked")));
                for (int stream : new int[] {1, 3, 5}) {
                    WmpFrame f = peer.read();
                    assertThat(f).as("stream %d", stream).isInstanceOf(WmpCancel.class);
                    assertThat(((WmpCancel) f).streamId()).isEqualTo(stream);
                    assertThat(((WmpCancel) f).error()).isEqualTo(WmpError.PROTOCOL_ERROR);
                }

                peer.send(get(7, "/echo", fields("x-b", "fine")));
                assertThat(status(peer, 7)).as("the same connection serves the next stream").isEqualTo(200);
            }
            // TestApp counts a request just after answering it, so the count may trail the 200 read above.
            await().atMost(Duration.ofSeconds(5)).until(() -> app.served.get() >= 1);
            assertThat(app.served.get()).as("only the valid request reached the app").isEqualTo(1);
            assertThat(app.headersOf("GET /echo")).containsKey("x-b").doesNotContainKey("x-injected");
            assertThat(provider.metrics().rejected.count(Reason.BAD_FIELD_VALUE)).isEqualTo(1);
            assertThat(provider.metrics().rejected.count(Reason.BAD_TARGET)).isEqualTo(1);
            assertThat(provider.metrics().rejected.count(Reason.FRAMING_FIELD)).isEqualTo(1);

            HttpClient http = HttpClient.newHttpClient();
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + MeshFixture.port(provider, "admin") + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body();
            assertThat(metrics).contains("weft_rejected_total{boundary=\"wmp_to_provider\",reason=\"bad_field_value\"} 1");
        }
    }

    @Test
    void dataOnAStreamNeverOpenedEndsTheConnectionWithGoAwayNamingTheLastStream() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            try (RawPeer peer = new RawPeer(MeshFixture.port(provider, "inbound"))) {
                peer.send(get(1, "/echo", fields()));
                assertThat(status(peer, 1)).isEqualTo(200);

                peer.send(new WmpData(9, true, Unpooled.copiedBuffer("smuggled", StandardCharsets.US_ASCII)));

                WmpFrame f = peer.read();
                assertThat(f).isInstanceOf(WmpGoAway.class);
                assertThat(((WmpGoAway) f).error()).isEqualTo(WmpError.PROTOCOL_ERROR);
                assertThat(((WmpGoAway) f).lastStreamId()).isEqualTo(1);
                try {
                    assertThat(peer.read()).as("the sidecar closes the connection after its GOAWAY").isNull();
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("the connection stayed open after GOAWAY PROTOCOL_ERROR", e);
                } catch (IOException reset) {
                    // a reset is a close too
                }
            }
            assertThat(provider.metrics().rejected.count(Reason.UNOPENED_STREAM)).isEqualTo(1);
            await().atMost(Duration.ofSeconds(5)).until(() -> app.served.get() >= 1);
            assertThat(app.served.get()).isEqualTo(1);
        }
    }

    @Test
    void aSecondRequestOnAnOpenStreamEndsTheConnection() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            try (RawPeer peer = new RawPeer(MeshFixture.port(provider, "inbound"))) {
                // Stream 1 stays open: its request has not ended (a POST whose body is still to come).
                peer.send(new WmpRequest(1, false, "POST", "provider", "/slow?ms=2000", fields(), Unpooled.EMPTY_BUFFER));
                peer.send(get(1, "/echo", fields()));

                WmpFrame f;
                while ((f = peer.read()) != null && !(f instanceof WmpGoAway)) {
                    // the app may not have answered stream 1 yet; nothing else is expected
                }
                assertThat(f).isInstanceOf(WmpGoAway.class);
                assertThat(((WmpGoAway) f).error()).isEqualTo(WmpError.PROTOCOL_ERROR);
                assertThat(((WmpGoAway) f).lastStreamId()).isEqualTo(1);
            }
            assertThat(provider.metrics().rejected.count(Reason.SECOND_REQUEST)).isEqualTo(1);
            assertThat(app.served.get()).as("the second REQUEST never became a request to the app")
                    .isLessThanOrEqualTo(1);
        }
    }
}
