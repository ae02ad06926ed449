package dev.weft.dataplane.exchange;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.downstream.WmpDownstream;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.protocol.WmpWindowUpdate;
import dev.weft.registry.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The provider side's WMP boundary with the real session ({@link MeshSession}), downstream ({@link WmpDownstream})
 * and inbound stack, in an EmbeddedChannel, with the app in memory ({@link InMemoryUpstream}): a request the
 * validator refuses resets its stream, is counted, and never reaches the app, while the connection serves the next
 * stream; a body that breaks its content-length is cut off the same way. The last tests are the two LEAK rows of
 * issue 16: body frames held for a stream must be released when the peer resets it or the connection ends.
 *
 * <p>Buffers: every body a test sends comes from {@link #body} (pooled, so the leak detector sees it too) and is
 * checked after the test to have been released ({@link #everyBodyWasReleased}).
 */
class WmpRefusalTest {
    private final SidecarMetrics metrics = new SidecarMetrics();
    private final InMemoryUpstream app = new InMemoryUpstream();
    private final List<ByteBuf> bodies = new ArrayList<>();
    private EmbeddedChannel mesh;

    @AfterEach
    void everyBodyWasReleased() {
        if (mesh != null) {
            mesh.finishAndReleaseAll();
        }
        for (ByteBuf b : bodies) {
            assertThat(b.refCnt()).as("a body the peer sent was neither passed on nor released").isZero();
        }
        app.assertAnswersReleased();
    }

    private ByteBuf body(String s) {
        ByteBuf b = ByteBufUtil.writeUtf8(PooledByteBufAllocator.DEFAULT, s);
        bodies.add(b);
        return b;
    }

    /** A provider's inbound connection in front of an app that takes {@code capacity} requests at once. */
    private EmbeddedChannel connection(int capacity) {
        Cluster cluster = new Cluster("provider", Balancer.named("least-request"), 16, Duration.ofSeconds(30));
        cluster.update(List.of(new Endpoint("provider", "app", "127.0.0.1", 8080, 1, capacity, Map.of())));
        PolicyStack stack = PolicyStack.inbound(cluster, app, Collaborator.named("event-loop"), metrics,
                ExchangeObserver.NOOP, "provider");
        mesh = new EmbeddedChannel();
        mesh.pipeline().addLast(new MeshSession(WmpDownstream.acceptor(stack, mesh.eventLoop(), "peer"), "peer",
                metrics.rejected));
        return mesh;
    }

    private static WmpHeaders fields(String... pairs) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    /** The next frame written to the peer, released after its type and stream are read. */
    private WmpFrame next() {
        WmpFrame f = mesh.readOutbound();
        assertThat(f).as("a frame to the peer").isNotNull();
        f.release();
        return f;
    }

    private void assertReset(int stream) {
        WmpFrame f = next();
        assertThat(f).isInstanceOf(WmpCancel.class);
        assertThat(((WmpCancel) f).streamId()).isEqualTo(stream);
        assertThat(((WmpCancel) f).error()).isEqualTo(WmpError.PROTOCOL_ERROR);
    }

    @Test
    void aHeaderValueWithCrLfResetsItsStreamReachesNoAppAndTheConnectionServesTheNextStream() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, true, "POST", "provider", "/", fields("x-a",
                "1\r\ntransfer-encoding: chunked", "content-length", "4"), body("0\r\n\r")));

        assertReset(1);
        assertThat(app.calls).as("nothing reached the app").isEmpty();
        assertThat(metrics.rejected.count(Reason.BAD_FIELD_VALUE)).isEqualTo(1);

        ch.writeInbound(new WmpRequest(3, true, "GET", "provider", "/next", fields(), body("")));
        app.call(0).answer(200, "ok");
        WmpFrame answer = next();
        assertThat(answer).isInstanceOf(WmpResponse.class);
        assertThat(((WmpResponse) answer).streamId()).isEqualTo(3);
        assertThat(((WmpResponse) answer).status()).isEqualTo(200);
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void theRestOfARefusedRequestsBodyIsDroppedAndReleased() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, false, "POST", "provider", "http://evil.example/x", fields(), body("a")));
        ch.writeInbound(new WmpData(1, false, body("b")));
        ch.writeInbound(new WmpData(1, true, body("c")));

        assertReset(1);
        assertThat(app.calls).isEmpty();
        assertThat(metrics.rejected.count(Reason.BAD_TARGET)).isEqualTo(1);
        assertThat(ch.isOpen()).as("late frames of a stream we reset are not an error").isTrue();
    }

    @Test
    void literalFramingAndHostFieldsAreRefused() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, true, "GET", "provider", "/", fields("transfer-encoding", "chunked"), body("")));
        ch.writeInbound(new WmpRequest(3, true, "GET", "provider", "/", fields("host", "evil.example"), body("")));
        ch.writeInbound(new WmpRequest(5, true, "GET", "provider", "/", fields("transfer-encoding ", "chunked"), body("")));

        assertReset(1);
        assertReset(3);
        assertReset(5);
        assertThat(app.calls).isEmpty();
        assertThat(metrics.rejected.count(Reason.FRAMING_FIELD)).isEqualTo(2);
        assertThat(metrics.rejected.count(Reason.BAD_FIELD_NAME)).isEqualTo(1);
    }

    @Test
    void aBodyPastItsContentLengthResetsTheStreamAndEndsTheAppsCall() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, false, "POST", "provider", "/upload", fields("content-length", "4"), body("ab")));
        InMemoryUpstream.Call call = app.call(0);
        // Two bytes more than declared: written to the app they would be the start of a request of the peer's own.
        ch.writeInbound(new WmpData(1, true, body("cdGE")));

        assertReset(1);
        assertThat(call.body()).as("the bytes past the length never reach the app").isEqualTo("ab");
        assertThat(call.cancelled).as("the app's connection is closed, not reused").isTrue();
        assertThat(metrics.rejected.count(Reason.BAD_CONTENT_LENGTH)).isEqualTo(1);
    }

    @Test
    void aBodyThatEndsShortOfItsContentLengthResetsTheStream() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, false, "POST", "provider", "/upload", fields("content-length", "10"), body("ab")));
        ch.writeInbound(new WmpData(1, true, body("cd")));

        assertReset(1);
        assertThat(app.call(0).cancelled).isTrue();
        assertThat(metrics.rejected.count(Reason.BAD_CONTENT_LENGTH)).isEqualTo(1);
    }

    @Test
    void dataAfterTheRequestsEndResetsTheStreamAndNeverReachesTheApp() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, true, "POST", "provider", "/hold", fields(), body("")));
        InMemoryUpstream.Call call = app.call(0);
        // Written to the app, these bytes would follow a request it already has whole: a second request of the
        // peer's making (found by ProviderSessionFuzzTest).
        ch.writeInbound(new WmpData(1, false, body("GET /admin HTTP/1.1\r\nhost: provider\r\n\r\n")));

        assertReset(1);
        assertThat(call.body()).as("nothing after the request's end reaches the app").isEmpty();
        assertThat(call.cancelled).isTrue();
        assertThat(metrics.rejected.count(Reason.DATA_AFTER_END)).isEqualTo(1);
        assertThat(ch.isOpen()).as("a stream error: the connection carries on").isTrue();
    }

    @Test
    void aWindowUpdatePastTwoToThe31ResetsTheStream() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, true, "GET", "provider", "/hold", fields(), body("")));
        InMemoryUpstream.Call call = app.call(0);
        ch.writeInbound(new WmpWindowUpdate(1, Integer.MAX_VALUE));

        WmpFrame f = next();
        assertThat(f).isInstanceOf(WmpCancel.class);
        assertThat(((WmpCancel) f).error()).isEqualTo(WmpError.FLOW_CONTROL_ERROR);
        assertThat(call.cancelled).isTrue();
        assertThat(metrics.rejected.count(Reason.FLOW_CONTROL)).isEqualTo(1);
    }

    @Test
    void bodyHeldForAnAppThatCannotTakeItIsReleasedWhenThePeerCancels() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, false, "POST", "provider", "/upload", fields(), body("a")));
        InMemoryUpstream.Call call = app.call(0);
        call.writable = false;
        ch.writeInbound(new WmpData(1, false, body("held 1")));
        ch.writeInbound(new WmpData(1, false, body("held 2")));
        assertThat(call.body()).as("the rest is held while the app cannot take it").isEqualTo("a");

        ch.writeInbound(new WmpCancel(1, WmpError.CANCELLED));

        assertThat(call.cancelled).isTrue(); // and everyBodyWasReleased checks the held pieces
    }

    @Test
    void bodyHeldWhileTheRequestWaitsForTheAppIsReleasedWhenThePeerCancels() {
        EmbeddedChannel ch = connection(1);
        ch.writeInbound(new WmpRequest(1, true, "GET", "provider", "/slow", fields(), body("")));
        ch.writeInbound(new WmpRequest(3, false, "POST", "provider", "/queued", fields(), body("first")));
        ch.writeInbound(new WmpData(3, false, body("second")));
        assertThat(app.calls).as("stream 3 waits for the app's one slot").hasSize(1);

        ch.writeInbound(new WmpCancel(3, WmpError.TIMEOUT));
        app.call(0).answer(200, "slow");

        assertThat(next()).isInstanceOf(WmpResponse.class);
        assertThat(app.calls).as("the cancelled request never reaches the app").hasSize(1);
    }

    @Test
    void bodyHeldForAStreamIsReleasedWhenTheConnectionEnds() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, false, "POST", "provider", "/upload", fields(), body("a")));
        app.call(0).writable = false;
        ch.writeInbound(new WmpData(1, false, body("held")));

        ch.writeInbound(new WmpData(4, false, body("on a stream never opened"))); // a connection error: GOAWAY, close

        assertThat(ch.isOpen()).isFalse();
        assertThat(app.call(0).cancelled).isTrue();
    }

    @Test
    void dataAfterTheAppAnsweredTheWholeExchangeIsReleased() {
        EmbeddedChannel ch = connection(8);
        ch.writeInbound(new WmpRequest(1, false, "POST", "provider", "/early", fields(), body("a")));
        app.call(0).answer(413, "too large"); // the app answers before the request's end

        ch.writeInbound(new WmpData(1, false, body("more")));
        ch.writeInbound(new WmpData(1, true, body("end")));

        assertThat(ch.isOpen()).isTrue();
        assertThat(((WmpResponse) next()).status()).isEqualTo(413);
    }
}
