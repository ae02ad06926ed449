package dev.weft.dataplane;

import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A peer sidecar that answers badly, over real sockets to a real consumer sidecar (issue 16's fourth boundary, "WMP
 * answer → consumer side"): an answer the consumer side cannot carry safely to its client as HTTP/1.1 is a 502
 * {@code upstream-protocol-error} to that client alone, its stream reset, counted under {@code boundary="wmp_answer"},
 * while the shared mesh connection and the requests beside it carry on. And a peer that breaks the stream rules loses
 * the connection the consumer side dialled, counted as on the accepting side. The peer is a {@link ScriptedPeer}
 * registered as the service's only endpoint.
 */
class WmpAnswerSocketTest {

    private static WmpResponse answer(int stream, int status, String body, String... fields) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < fields.length; i += 2) {
            h.add(fields[i], fields[i + 1]);
        }
        return new WmpResponse(stream, true, status, h, Unpooled.copiedBuffer(body, StandardCharsets.US_ASCII));
    }

    /** The peer's answers, by path: well-formed for /ok, each other path breaking one rule of the answer boundary. */
    private static List<WmpFrame> script(WmpRequest r) {
        int id = r.streamId();
        return List.of(switch (r.path()) {
            case "/framing" -> answer(id, 200, "5\r\nhello\r\n0\r\n\r\n", "transfer-encoding", "chunked");
            case "/crlf" -> answer(id, 200, "ok", "x-a", "1\r\nset-cookie: session=evil", "content-length", "2");
            case "/upgrade" -> answer(id, 101, "", "upgrade", "h2c");
            case "/length" -> answer(id, 200, "hello, and the start of the next answer", "content-length", "5");
            case "/unopened-stream" -> answer(id + 100, 200, "ok", "content-length", "2");
            default -> answer(id, 200, "ok", "content-type", "text/plain", "content-length", "2");
        });
    }

    private static HttpResponse<String> call(HttpClient http, int port, String method, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The peer as the only endpoint of "provider", for as long as the registration is open. */
    private static Registration register(Registry registry, ScriptedPeer peer) {
        return registry.register(new Endpoint("provider", "scripted-1", "127.0.0.1", peer.port(), 1, 1000, Map.of()),
                Duration.ofSeconds(10));
    }

    /** Waits until requests to {@code port} reach the peer (the consumer side has learnt its endpoint). */
    private static void awaitRoute(HttpClient http, int port) {
        await().atMost(Duration.ofSeconds(10)).until(() -> call(http, port, "GET", "/ok").statusCode() == 200);
    }

    @Test
    void anAnswerThatBreaksTheRulesIsA502ToItsClientAloneWhileTheMeshConnectionServesTheOthers() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp consumerApp = new TestApp();
             Registry registry = Registries.open(mesh.registryUrl(), mesh.operator());
             ScriptedPeer peer = new ScriptedPeer(WmpAnswerSocketTest::script);
             Registration registered = register(registry, peer);
             ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(pool).build();
            awaitRoute(http, port);
            int cancelsBefore = peer.cancels().size();

            // 40 innocent requests in flight beside the bad answers, on the same mesh connections.
            List<Future<HttpResponse<String>>> innocent = new ArrayList<>();
            List<Future<HttpResponse<String>>> bad = new ArrayList<>();
            String[] badPaths = {"/framing", "/crlf", "/upgrade", "/length"};
            for (int i = 0; i < 40; i++) {
                innocent.add(pool.submit((Callable<HttpResponse<String>>) () -> call(http, port, "GET", "/ok")));
                if (i % 10 == 0) {
                    String path = badPaths[i / 10];
                    bad.add(pool.submit((Callable<HttpResponse<String>>) () -> call(http, port, "GET", path)));
                }
            }
            for (Future<HttpResponse<String>> f : bad) {
                HttpResponse<String> r = f.get(15, TimeUnit.SECONDS);
                assertThat(r.statusCode()).as(r.uri().getPath()).isEqualTo(502);
                assertThat(r.headers().firstValue("x-weft-error")).as(r.uri().getPath())
                        .hasValue("upstream-protocol-error");
                assertThat(r.headers().map()).as("nothing of the peer's answer reached the client")
                        .doesNotContainKeys("set-cookie", "upgrade", "transfer-encoding");
            }
            for (Future<HttpResponse<String>> f : innocent) {
                HttpResponse<String> r = f.get(15, TimeUnit.SECONDS);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).isEqualTo("ok");
            }

            assertThat(peer.goAways()).as("no mesh connection was ended").isEmpty();
            await().atMost(Duration.ofSeconds(5)).until(() -> peer.cancels().size() - cancelsBefore >= 4);
            assertThat(peer.cancels().subList(cancelsBefore, peer.cancels().size()))
                    .as("each bad answer's stream was reset, and only those")
                    .hasSize(4).allMatch(c -> c.error() == WmpError.PROTOCOL_ERROR);
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + MeshFixture.port(consumer, "admin") + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics)
                    .contains("weft_rejected_total{boundary=\"wmp_answer\",reason=\"framing_field\"} 1")
                    .contains("weft_rejected_total{boundary=\"wmp_answer\",reason=\"bad_field_value\"} 1")
                    .contains("weft_rejected_total{boundary=\"wmp_answer\",reason=\"bad_status\"} 1")
                    .contains("weft_rejected_total{boundary=\"wmp_answer\",reason=\"bad_content_length\"} 1");
        }
    }

    @Test
    void aPeerThatAnswersAStreamNeverOpenedLosesTheConnectionTheConsumerSideDialledAndIsCounted() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp consumerApp = new TestApp();
             Registry registry = Registries.open(mesh.registryUrl(), mesh.operator());
             ScriptedPeer peer = new ScriptedPeer(WmpAnswerSocketTest::script);
             Registration registered = register(registry, peer)) {
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            awaitRoute(http, port);

            // A POST is not retried after a reset, so the peer sees this request once.
            HttpResponse<String> r = call(http, port, "POST", "/unopened-stream");

            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.headers().firstValue("x-weft-error")).hasValue("upstream-reset");
            await().atMost(Duration.ofSeconds(5)).until(() -> !peer.goAways().isEmpty());
            assertThat(peer.goAways().getFirst().error()).isEqualTo(WmpError.PROTOCOL_ERROR);
            assertThat(peer.goAways().getFirst().lastStreamId()).as("the dialling side processes no stream").isZero();
            assertThat(consumer.metrics().rejected.count(Reason.UNOPENED_STREAM)).isEqualTo(1);
            assertThat(call(http, port, "GET", "/ok").statusCode()).as("a new connection serves the next request")
                    .isEqualTo(200);
        }
    }

    @Test
    void aPeerWhoseAnswersKeepBreakingTheRulesIsEjectedAndTheOtherInstanceTakesTheTraffic() throws Exception {
        // Every answer of "bad" carries a header line injection; "good" answers well. Outlier detection must count
        // the refused answers as the endpoint's failures (5 in a row by default), like its 5xx.
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp consumerApp = new TestApp();
             Registry registry = Registries.open(mesh.registryUrl(), mesh.operator());
             ScriptedPeer bad = new ScriptedPeer(r -> List.of(answer(r.streamId(), 200, "ok", "x-a", "1\r\nx-b: 2")));
             ScriptedPeer good = new ScriptedPeer(WmpAnswerSocketTest::script);
             Registration badOne = registry.register(new Endpoint("provider", "bad-1", "127.0.0.1", bad.port(), 1,
                     1000, Map.of()), Duration.ofSeconds(10));
             Registration goodOne = register(registry, good)) {
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            awaitRoute(http, port);
            await().atMost(Duration.ofSeconds(10)).until(() -> call(http, port, "GET", "/ok").statusCode() == 502);

            int refused = 0;
            for (int i = 0; i < 40; i++) {
                if (call(http, port, "GET", "/ok").statusCode() == 502) {
                    refused++;
                }
            }
            int receivedByBad = bad.received.size();
            for (int i = 0; i < 20; i++) {
                assertThat(call(http, port, "GET", "/ok").statusCode()).as("after the ejection").isEqualTo(200);
            }
            assertThat(bad.received.size()).as("frames the ejected peer got after it was ejected").isEqualTo(receivedByBad);
            assertThat(refused).as("answers refused before the ejection").isLessThanOrEqualTo(5);
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + MeshFixture.port(consumer, "admin") + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).containsPattern("weft_endpoint_ejections_total\\{[^}]*endpoint=\"bad-1\"} 1");
        }
    }
}
