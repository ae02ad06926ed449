package dev.weft.dataplane;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 16's rows for the HTTP/1.1 listeners, end to end over real sockets: each malformed request, sent to the
 * consumer's Host-routed listener, to its upstream listener and to the provider's inbound listener (where HTTP/1.1
 * mesh peers arrive), is answered 400 and reaches no app. The decoders' own tests (Http1RequestDecoderTest) hold
 * every rule; this shows the listeners apply them and forward nothing.
 */
class ListenerRefusalSocketTest {
    private static MeshFixture mesh;
    private static TestApp app;
    private static TestApp consumerApp;
    private static Sidecar provider;
    private static Sidecar consumer;

    @BeforeAll
    static void start() throws Exception {
        mesh = new MeshFixture("event-loop");
        app = new TestApp();
        consumerApp = new TestApp();
        provider = mesh.provider("provider", "p1", app.address(), 1, 10);
        consumer = mesh.consumer(consumerApp.address(), List.of("provider"), true);
    }

    @AfterAll
    static void stop() throws Exception {
        mesh.close();
        app.close();
        consumerApp.close();
    }

    private static String chunked(String chunks) {
        return "POST /echo HTTP/1.1\r\nHost: provider\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks;
    }

    static Stream<Arguments> refusals() {
        List<Arguments> rows = new ArrayList<>();
        String[][] cases = {
                {"a chunk size that is not hex", chunked("zz\r\nx\r\n0\r\n\r\n")},
                {"a chunk extension of 100 KB", chunked("1;a=" + "b".repeat(100 * 1024) + "\r\nx\r\n0\r\n\r\n")},
                {"an absolute-form target naming another host", "GET http://evil.example/echo HTTP/1.1\r\nHost: provider\r\n\r\n"},
                {"two Hosts", "GET /echo HTTP/1.1\r\nHost: provider\r\nHost: evil.example\r\n\r\n"},
                {"no Host on HTTP/1.1", "GET /echo HTTP/1.1\r\nAccept: */*\r\n\r\n"},
                {"the HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"}};
        for (String listener : new String[] {"consumer outbound", "consumer upstream provider", "provider inbound"}) {
            for (String[] c : cases) {
                rows.add(Arguments.of(listener, c[0], c[1]));
            }
        }
        return rows.stream();
    }

    private static int port(String listener) {
        return switch (listener) {
            case "consumer outbound" -> MeshFixture.port(consumer, "outbound");
            case "consumer upstream provider" -> MeshFixture.port(consumer, "upstream provider");
            case "provider inbound" -> MeshFixture.port(provider, "inbound");
            default -> throw new IllegalArgumentException(listener);
        };
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("refusals")
    void aMalformedRequestIsAnswered400AndReachesNoApp(String listener, String what, String request) throws Exception {
        int arrivedBefore = app.arrivedNotHealthChecks.get() + consumerApp.arrivedNotHealthChecks.get();
        try (RawHttp c = new RawHttp(port(listener))) {
            // Written from a thread of its own: the listener may answer and close before it has read all of it.
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    c.send(request);
                } catch (IOException closedEarly) {
                    // the answer below is what counts
                }
            });
            RawHttp.Response r = c.read();
            writer.join(10_000);
            assertThat(r.status()).as(what).isEqualTo(400);
            assertThat(r.header("x-weft-error")).isEqualTo("bad-request");
        }
        assertThat(app.arrivedNotHealthChecks.get() + consumerApp.arrivedNotHealthChecks.get()).as("requests the apps saw")
                .isEqualTo(arrivedBefore);
    }
}
