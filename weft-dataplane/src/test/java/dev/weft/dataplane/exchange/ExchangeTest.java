package dev.weft.dataplane.exchange;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.downstream.WmpDownstream;
import dev.weft.dataplane.exchange.Http1Connection.Answer;
import dev.weft.dataplane.http.Http1Messages;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.outbound.Destination;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.registry.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exchange state machine ({@link ProxyExchange}) behind the real HTTP/1.1 downstream ({@code Http1Downstream}),
 * on the real stacks of phases ({@link PolicyStack#outbound}, {@link PolicyStack#inbound}), in an EmbeddedChannel,
 * with an upstream in memory ({@link InMemoryUpstream}) that the test answers. No socket: every step is the test's,
 * so each assertion sees the exchange exactly between two events (the deadline test takes a thread of its own, see
 * {@link #onFreshThread}).
 *
 * <p>Buffers: every request piece and every answer body a test makes is checked after the test to have been
 * released by whoever owned it last ({@link #finishAndCheckBuffers()}), on top of weft-testing's leak detector, which
 * runs at paranoid level for every test class. Those buffers come from the pooled allocator: the detector does not
 * track {@code Unpooled} heap buffers, so a test that made its input with {@code Unpooled.copiedBuffer} would have
 * no leak check on it.
 */
class ExchangeTest {
    private final SidecarMetrics metrics = new SidecarMetrics();
    private final InMemoryUpstream upstream = new InMemoryUpstream();
    private final List<Http1Connection> connections = new ArrayList<>();
    private final List<EmbeddedChannel> meshChannels = new ArrayList<>();
    /** "status kind" of every trace that ended, for the stacks built with {@link #recording}. */
    private final List<String> traceEnds = new ArrayList<>();
    private final ExchangeObserver recording = (direction, localService, method, path, headers, peer, startNanos) -> new ExchangeTrace() {
        @Override
        public void end(int status, long bytesIn, long bytesOut, String error, long nanos) {
            traceEnds.add(status + " " + error);
        }
    };

    @AfterEach
    void finishAndCheckBuffers() {
        connections.forEach(Http1Connection::finish);
        meshChannels.forEach(EmbeddedChannel::finishAndReleaseAll);
        connections.forEach(Http1Connection::assertPiecesReleased);
        upstream.assertAnswersReleased();
    }

    // ---- fixtures ----

    /**
     * The default policy, but each request funds a whole retry ({@code budget-ratio: 1}). A new budget holds nothing,
     * and its floor per second is only credited 100 ms after it was made, so with the default ratio (0.2) a retry in
     * a cluster made a moment ago is refused by the budget (see {@link #aDialFailureIsRetriedRightAfterTheClustersPolicyWasSet}).
     */
    private static final ServicePolicy RETRYING = new ServicePolicy(Duration.ofSeconds(15),
            new ServicePolicy.RetryPolicy(3, 1.0, 10, true), ServicePolicy.OutlierPolicy.DEFAULT, 0, 0, 0);

    /** A cluster of these endpoints under {@link #RETRYING}. */
    private static Cluster retrying(String... endpointIds) {
        Cluster c = cluster(endpointIds);
        c.policy(RETRYING);
        return c;
    }

    private static Cluster cluster(String... endpointIds) {
        Cluster c = new Cluster("provider", Balancer.named("least-request"), 16, Duration.ofSeconds(1));
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < endpointIds.length; i++) {
            eps.add(new Endpoint("provider", endpointIds[i], "10.0.0." + (i + 1), 7001, 1, 8, Map.of()));
        }
        c.update(eps);
        return c;
    }

    /** A listener bound to one cluster, as {@code --upstream provider=...} makes. */
    private static Destination to(Cluster c) {
        return new Destination() {
            @Override
            public Cluster resolve(RequestHead request) {
                return c;
            }

            @Override
            public String authority(RequestHead request, Cluster cluster) {
                return cluster.service();
            }
        };
    }

    private PolicyStack outbound(Cluster c) {
        return outbound(c, ExchangeObserver.NOOP);
    }

    private PolicyStack outbound(Cluster c, ExchangeObserver observer) {
        return PolicyStack.outbound(to(c), upstream, Collaborator.named("event-loop"), metrics, observer, "consumer");
    }

    private PolicyStack inbound(Cluster app) {
        return PolicyStack.inbound(app, upstream, Collaborator.named("event-loop"), metrics, ExchangeObserver.NOOP,
                "provider");
    }

    private Http1Connection connect(PolicyStack stack) {
        Http1Connection c = new Http1Connection(stack);
        connections.add(c);
        return c;
    }

    private static EndpointState endpoint(Cluster c, String id) {
        return c.endpoints().stream().filter(e -> e.endpoint().id().equals(id)).findFirst().orElseThrow();
    }

    private static int inFlight(Cluster c) {
        return c.endpoints().stream().mapToInt(EndpointState::inFlight).sum();
    }

    // ---- one request, one answer ----

    @Test
    void aSmallPostGoesUpstreamAsOneHeadWithItsWholeBodyAndItsAnswerIsRelayedWithItsLength() {
        Cluster c = cluster("a");
        Http1Connection client = connect(outbound(c));

        client.request("POST", "/orders", "hello");

        InMemoryUpstream.Call call = upstream.call(0);
        assertThat(upstream.calls).hasSize(1);
        assertThat(call.heads).isEqualTo(1);
        assertThat(call.pieces).as("the whole body rides with the head, and nothing follows")
                .containsExactly(new InMemoryUpstream.Piece("hello", true));
        assertThat(call.head.method()).isEqualTo("POST");
        assertThat(call.head.path()).isEqualTo("/orders");
        assertThat(call.authority).isEqualTo("provider");
        assertThat(call.fieldsAtSend.get("x-weft-caller")).as("the caller is this sidecar's service").isEqualTo("consumer");
        assertThat(Long.parseLong(call.fieldsAtSend.get("x-weft-deadline-ms"))).as("the policy's 15 s budget travels")
                .isBetween(1L, 15_000L);
        assertThat(endpoint(c, "a").inFlight()).isEqualTo(1);
        assertThat(client.answers()).as("nothing is answered before the upstream answers").isEmpty();

        call.answer(200, "ok");

        Answer a = client.answer();
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.header("content-length")).isEqualTo("2");
        assertThat(a.header("connection")).isNull();
        assertThat(a.body()).isEqualTo("ok");
        assertThat(client.isOpen()).as("a keep-alive connection stays open").isTrue();
        assertThat(endpoint(c, "a").inFlight()).as("the endpoint's slot is given back").isZero();
        assertThat(c.outboundLimit().inFlight()).as("the outbound limit's place is given back").isZero();
        assertThat(metrics.outbound.inFlight()).isZero();
        assertThat(metrics.outbound.requests(2)).isEqualTo(1);
    }

    @Test
    void twoPipelinedRequestsGoUpstreamOneAfterTheOtherAndAreAnsweredInOrder() {
        Cluster c = cluster("a");
        Http1Connection client = connect(outbound(c));

        client.send(Http1Connection.head("GET", "/first"), Http1Messages.END,
                Http1Connection.head("GET", "/second"), Http1Messages.END);

        assertThat(upstream.calls).as("the second waits for the first's answer").hasSize(1);
        assertThat(upstream.call(0).head.path()).isEqualTo("/first");
        assertThat(client.channel.config().isAutoRead()).as("reading stops while a request waits its turn").isFalse();

        upstream.call(0).answer(200, "one");

        assertThat(client.answers()).extracting(Answer::body).containsExactly("one");
        assertThat(upstream.calls).hasSize(2);
        assertThat(upstream.call(1).head.path()).isEqualTo("/second");

        upstream.call(1).answer(200, "two");

        assertThat(client.answers()).extracting(Answer::body).containsExactly("two");
        assertThat(client.isOpen()).isTrue();
        assertThat(client.channel.config().isAutoRead()).as("reading goes on once the backlog is served").isTrue();
    }

    @Test
    void aConnectionCloseRequestIsAnsweredWithConnectionCloseAndTheConnectionThenCloses() {
        Http1Connection client = connect(outbound(cluster("a")));

        client.send(Http1Connection.head("GET", "/bye").keepAlive(false), Http1Messages.END);
        upstream.call(0).answer(200, "bye");

        Answer a = client.answer();
        assertThat(a.header("connection")).isEqualToIgnoringCase("close");
        assertThat(client.isOpen()).isFalse();
    }

    @Test
    void aClientThatExpects100ContinueIsToldToSendItsBody() {
        Http1Connection client = connect(outbound(cluster("a")));

        client.send(Http1Connection.head("POST", "/upload", "content-length", "5", "expect", "100-continue")
                .expectContinue(true));

        assertThat(client.rawOutbound()).isEqualTo("HTTP/1.1 100 Continue\r\n\r\n");
        assertThat(client.isOpen()).isTrue();
        client.send(client.piece("hello"), Http1Messages.END);
        assertThat(upstream.call(0).body()).isEqualTo("hello");
        upstream.call(0).answer(200, "ok");
        assertThat(client.answer().status()).isEqualTo(200);
    }

    // ---- retries ----

    @Test
    void aDialFailureOnTheFirstEndpointIsRetriedOnTheOtherAndCounted() {
        Cluster c = retrying("a", "b");
        Http1Connection client = connect(outbound(c));
        upstream.failNextOpen(new Upstream.ConnectException("connection refused", null));

        client.request("POST", "/orders", "hello"); // nothing was sent: safe for any method

        assertThat(upstream.dialled).hasSize(2);
        assertThat(upstream.dialled.get(1)).as("the retry avoids the endpoint that failed").isNotEqualTo(upstream.dialled.get(0));
        assertThat(metrics.connectRetries.sum()).isEqualTo(1);
        assertThat(endpoint(c, upstream.dialled.get(0)).isUnreachable()).as("the refusing endpoint is paused").isTrue();
        InMemoryUpstream.Call call = upstream.call(0);
        assertThat(call.endpoint.id()).isEqualTo(upstream.dialled.get(1));
        assertThat(call.pieces).containsExactly(new InMemoryUpstream.Piece("hello", true));

        call.answer(200, "from " + call.endpoint.id());

        assertThat(client.answer().body()).isEqualTo("from " + upstream.dialled.get(1));
        assertThat(inFlight(c)).isZero();
    }

    @Test
    void aDialFailureIsRetriedRightAfterTheClustersPolicyWasSet() {
        Cluster c = cluster("a", "b");
        c.policy(ServicePolicy.DEFAULT); // as a policy push does
        Http1Connection client = connect(outbound(c));
        upstream.failNextOpen(new Upstream.ConnectException("connection refused", null));

        client.request("GET", "/orders/1", "");

        assertThat(upstream.dialled).as("the dial failure is tried on the other endpoint").hasSize(2);
        upstream.call(0).answer(200, "ok");
        assertThat(client.answer().status()).isEqualTo(200);
    }

    @Test
    void aCircuitOpenOnTheFirstEndpointIsRetriedOnTheOtherWithoutBlamingIt() {
        Cluster c = retrying("a", "b");
        Http1Connection client = connect(outbound(c));
        upstream.failNextOpen(new Upstream.CircuitOpenException("already has 1 connections"));

        client.request("POST", "/orders", "hello");

        assertThat(upstream.dialled).hasSize(2).doesNotHaveDuplicates();
        assertThat(endpoint(c, upstream.dialled.get(0)).isUnreachable()).isFalse();
        assertThat(endpoint(c, upstream.dialled.get(0)).failures()).as("our own connection cap is not its failure").isZero();
        upstream.call(0).answer(200, "ok");
        assertThat(client.answer().status()).isEqualTo(200);
    }

    @Test
    void aPostWhoseCallIsResetBeforeAnyAnswerIsNotRetriedAndGets502UpstreamReset() {
        Cluster c = retrying("a", "b");
        Http1Connection client = connect(outbound(c));

        client.request("POST", "/orders", "hello");
        upstream.call(0).reset(false);

        assertThat(upstream.calls).as("the app may have seen it: a POST is not sent twice").hasSize(1);
        Answer a = client.answer();
        assertThat(a.status()).isEqualTo(502);
        assertThat(a.header("x-weft-error")).isEqualTo("upstream-reset");
        assertThat(a.header("x-weft-unprocessed")).isNull();
        assertThat(metrics.streamsReset.sum()).isEqualTo(1);
        assertThat(inFlight(c)).isZero();
        assertThat(client.isOpen()).as("the whole request was read: the connection can carry the next").isTrue();
    }

    @Test
    void aGetWhoseCallIsResetBeforeAnyAnswerIsRetriedOnTheOtherEndpoint() {
        Cluster c = retrying("a", "b");
        Http1Connection client = connect(outbound(c));

        client.request("GET", "/orders/1", "");
        upstream.call(0).reset(false);

        assertThat(upstream.calls).hasSize(2);
        assertThat(upstream.call(1).endpoint).isNotEqualTo(upstream.call(0).endpoint);
        assertThat(upstream.call(1).ended()).isTrue();
        assertThat(client.answers()).as("the reset is not answered: the retry is").isEmpty();

        upstream.call(1).answer(200, "order 1");

        assertThat(client.answer().body()).isEqualTo("order 1");
        assertThat(c.retries()).isEqualTo(1);
        assertThat(inFlight(c)).isZero();
    }

    @Test
    void aPostWhoseStreamThePeerRefusedIsRetriedWithItsBody() {
        Http1Connection client = connect(outbound(retrying("a", "b")));

        client.request("POST", "/orders", "hello");
        upstream.call(0).reset(true); // a draining peer never started on it

        assertThat(upstream.calls).hasSize(2);
        assertThat(upstream.call(1).pieces).containsExactly(new InMemoryUpstream.Piece("hello", true));
        upstream.call(1).answer(201, "created");
        assertThat(client.answer().status()).isEqualTo(201);
    }

    @Test
    void aPeers503MarkedUnprocessedIsRetriedForAPostWithTheSameBody() {
        Cluster c = retrying("a", "b");
        Http1Connection client = connect(outbound(c));

        client.request("POST", "/orders", "hello");
        upstream.call(0).answer(503, "shed", "x-weft-unprocessed", "true", "x-weft-error", "inbound-limit");

        assertThat(upstream.calls).as("the peer says nothing reached an app").hasSize(2);
        InMemoryUpstream.Call retry = upstream.call(1);
        assertThat(retry.endpoint).isNotEqualTo(upstream.call(0).endpoint);
        assertThat(retry.pieces).as("the body kept from the first attempt goes again, whole")
                .containsExactly(new InMemoryUpstream.Piece("hello", true));
        assertThat(client.answers()).as("the peer's 503 is dropped, not relayed").isEmpty();

        retry.answer(201, "created");

        Answer a = client.answer();
        assertThat(a.status()).isEqualTo(201);
        assertThat(a.body()).isEqualTo("created");
        assertThat(inFlight(c)).isZero();
    }

    @Test
    void aPeers503WithoutTheUnprocessedMarkIsRelayedForAPost() {
        Http1Connection client = connect(outbound(retrying("a", "b")));

        client.request("POST", "/orders", "hello");
        upstream.call(0).answer(503, "busy");

        assertThat(upstream.calls).as("the app may have seen it").hasSize(1);
        Answer a = client.answer();
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.body()).isEqualTo("busy");
    }

    @Test
    void onTheInboundStackAnApps503MarkedUnprocessedIsRelayedAsTheAppsOwnAnswer() {
        Cluster app = cluster("app");
        Http1Connection peer = connect(inbound(app));

        peer.request("POST", "/orders", "hello");
        upstream.call(0).answer(503, "app busy", "x-weft-unprocessed", "true");

        assertThat(upstream.calls).hasSize(1);
        Answer a = peer.answer();
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.body()).isEqualTo("app busy");
        assertThat(a.header("x-weft-error")).as("the app's answer, not the mesh's").isNull();
        assertThat(inFlight(app)).isZero();
    }

    @Test
    void onTheInboundStackTheUnprocessedMarkOfAnAppsAnswerNeverReachesTheWmpSide() {
        Cluster app = cluster("app");
        PolicyStack stack = inbound(app);
        EmbeddedChannel mesh = new EmbeddedChannel();
        meshChannels.add(mesh);
        mesh.pipeline().addLast(new MeshSession(WmpDownstream.acceptor(stack, mesh.eventLoop(), "peer"), "peer"));
        ByteBuf body = ByteBufUtil.writeUtf8(PooledByteBufAllocator.DEFAULT, "hello");

        mesh.writeInbound(new WmpRequest(1, true, "POST", "provider", "/orders",
                new WmpHeaders().add("content-length", "5"), body));
        upstream.call(0).answer(503, "app busy", "x-weft-unprocessed", "true");

        WmpResponse r = mesh.readOutbound();
        try {
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.headers().get("x-weft-unprocessed")).as("an app can never make the mesh resend a request").isNull();
            assertThat(r.body().toString(StandardCharsets.UTF_8)).isEqualTo("app busy");
        } finally {
            r.release();
        }
        assertThat(upstream.call(0).pieces).containsExactly(new InMemoryUpstream.Piece("hello", true));
        assertThat(body.refCnt()).isZero();
    }

    @Test
    void onTheInboundStackAnAppAtItsLimitIsAnswered503InboundLimitMarkedUnprocessedOverWmp() {
        Cluster app = new Cluster("provider", Balancer.named("least-request"), 16, Duration.ofSeconds(1));
        app.update(List.of(new Endpoint("provider", "app", "127.0.0.1", 8080, 1, 1, Map.of())));
        app.shedWhenFull(true);
        EmbeddedChannel mesh = new EmbeddedChannel();
        meshChannels.add(mesh);
        mesh.pipeline().addLast(new MeshSession(WmpDownstream.acceptor(inbound(app), mesh.eventLoop(), "peer"), "peer"));

        mesh.writeInbound(new WmpRequest(1, true, "GET", "provider", "/slow", new WmpHeaders(), Unpooled.EMPTY_BUFFER));
        mesh.writeInbound(new WmpRequest(3, true, "GET", "provider", "/shed", new WmpHeaders(), Unpooled.EMPTY_BUFFER));

        assertThat(upstream.calls).as("the app's one slot is taken by the first").hasSize(1);
        WmpResponse shed = mesh.readOutbound();
        try {
            assertThat(shed.streamId()).isEqualTo(3);
            assertThat(shed.status()).isEqualTo(503);
            assertThat(shed.headers().get("x-weft-error")).isEqualTo("inbound-limit");
            assertThat(shed.headers().get("x-weft-unprocessed")).as("the caller's sidecar may send it elsewhere")
                    .isEqualTo("true");
        } finally {
            shed.release();
        }
        upstream.call(0).answer(200, "slow");
        WmpResponse ok = mesh.readOutbound();
        try {
            assertThat(ok.streamId()).isEqualTo(1);
            assertThat(ok.status()).isEqualTo(200);
        } finally {
            ok.release();
        }
        assertThat(app.shed()).isEqualTo(1);
        assertThat(inFlight(app)).isZero();
    }

    @Test
    void onTheInboundStackTheUnprocessedMarkOfAnAppsAnswerNeverReachesTheHttp1Side() {
        Http1Connection peer = connect(inbound(cluster("app")));

        peer.request("POST", "/orders", "hello");
        upstream.call(0).answer(503, "app busy", "x-weft-unprocessed", "true");

        Answer a = peer.answer();
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.header("x-weft-unprocessed")).as("an app can never make the mesh resend a request").isNull();
    }

    // ---- refusals at once ----

    private static Cluster clusterWithOutboundLimitOfOne() {
        Cluster c = cluster("a");
        c.policy(ServicePolicy.DEFAULT.withOutboundLimit(new ServicePolicy.ConcurrencyLimit(true, 1, 1, 1)));
        return c;
    }

    @Test
    void theOutboundLimitRefusesAtOnceWith503UnprocessedSendsNothingAndTheConnectionServesTheNextRequest() {
        Cluster c = clusterWithOutboundLimitOfOne();
        PolicyStack stack = outbound(c);
        Http1Connection first = connect(stack);
        Http1Connection second = connect(stack);

        first.request("GET", "/slow", "");
        second.request("GET", "/refused", "");

        Answer refused = second.answer();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("x-weft-error")).isEqualTo("outbound-limit");
        assertThat(refused.header("x-weft-unprocessed")).isEqualTo("true");
        assertThat(upstream.calls).as("nothing of the refused request went upstream").hasSize(1);
        assertThat(c.outboundShed()).isEqualTo(1);
        assertThat(second.isOpen()).isTrue();

        upstream.call(0).answer(200, "slow");
        assertThat(first.answer().status()).isEqualTo(200);
        second.request("GET", "/next", "");
        assertThat(upstream.calls).as("with the place free again, the same connection is served").hasSize(2);
        upstream.call(1).answer(200, "next");
        assertThat(second.answer().body()).isEqualTo("next");
        assertThat(c.outboundLimit().inFlight()).isZero();
    }

    @Test
    void theOutboundLimitDropsTheBodyOfARefusedPostAndServesTheNextRequest() {
        Cluster c = clusterWithOutboundLimitOfOne();
        PolicyStack stack = outbound(c);
        Http1Connection first = connect(stack);
        Http1Connection second = connect(stack);
        first.request("GET", "/slow", "");

        // The head comes alone in its read: the refusal is made before any of the body is here.
        second.send(Http1Connection.head("POST", "/refused", "content-length", "10"));
        assertThat(second.answer().status()).isEqualTo(503);
        second.send(second.piece("01234"));
        second.send(second.piece("56789"), Http1Messages.END);
        upstream.call(0).answer(200, "slow");
        second.request("GET", "/next", "");

        assertThat(upstream.calls).hasSize(2);
        assertThat(upstream.call(1).head.path()).isEqualTo("/next");
        upstream.call(1).answer(200, "next");
        assertThat(second.answer().body()).isEqualTo("next");
    }

    @Test
    void aWholeRequestRefusedByAPhaseIsAnsweredWithoutConnectionClose() {
        PolicyStack stack = outbound(clusterWithOutboundLimitOfOne());
        Http1Connection first = connect(stack);
        Http1Connection second = connect(stack);
        first.request("GET", "/slow", "");

        second.request("GET", "/refused", "");

        Answer refused = second.answer();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("connection")).as("the client may send its next request on this connection").isNull();
        upstream.call(0).answer(200, "slow");
    }

    @Test
    void aRequestRefusedByAPhaseIsCountedAsFinishedAndEndsItsTrace() {
        PolicyStack stack = outbound(clusterWithOutboundLimitOfOne(), recording);
        Http1Connection first = connect(stack);
        Http1Connection second = connect(stack);
        first.request("GET", "/slow", "");

        second.request("GET", "/refused", "");
        assertThat(second.answer().status()).isEqualTo(503);
        upstream.call(0).answer(200, "slow");
        assertThat(first.answer().status()).isEqualTo(200);

        assertThat(traceEnds).containsExactlyInAnyOrder("503 outbound-limit", "200 null");
        assertThat(metrics.outbound.inFlight()).as("nothing is in flight any more").isZero();
        assertThat(metrics.outbound.requests(5)).isEqualTo(1);
        assertThat(metrics.outbound.meshErrors()).isEqualTo(1);
    }

    @Test
    void theInboundRateLimitAnswers429WithRetryAfterAndTheAppNeverSeesTheRequest() {
        Cluster app = cluster("app");
        app.policy(new ServicePolicy(Duration.ofSeconds(15), ServicePolicy.RetryPolicy.DEFAULT,
                ServicePolicy.OutlierPolicy.DEFAULT, 1, 1, 0)); // 1 a second, and a burst of 1 above it
        Http1Connection peer = connect(inbound(app));

        Answer limited = null;
        int passed = 0;
        for (int i = 0; i < 5 && limited == null; i++) {
            peer.request("GET", "/orders", "");
            if (upstream.calls.size() > passed) {
                upstream.call(passed++).answer(200, "ok");
                assertThat(peer.answer().status()).isEqualTo(200);
            } else {
                limited = peer.answer();
            }
        }

        assertThat(passed).as("the rate plus its burst pass").isEqualTo(2);
        assertThat(limited).isNotNull();
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.header("x-weft-error")).isEqualTo("rate-limited");
        assertThat(Long.parseLong(limited.header("retry-after"))).isBetween(1L, 2L);
        assertThat(limited.header("x-weft-unprocessed")).as("a 429 is not to be retried elsewhere at once").isNull();
        assertThat(app.rateLimited()).isEqualTo(1);
        assertThat(inFlight(app)).isZero();
        assertThat(peer.isOpen()).isTrue();
    }

    @Test
    void aMalformedRequestIsAnswered400AndTheConnectionCloses() {
        Http1Connection client = connect(outbound(cluster("a")));

        client.send(new Http1Messages.Rejected(400, "bad-request", "malformed request line: expected METHOD SP target"));

        Answer a = client.answer();
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.header("x-weft-error")).isEqualTo("bad-request");
        assertThat(a.body()).contains("expected METHOD SP target");
        assertThat(client.isOpen()).isFalse();
        assertThat(upstream.calls).isEmpty();
        assertThat(metrics.badRequests.sum()).isEqualTo(1);
    }

    // ---- the client or the upstream going away ----

    @Test
    void theClientClosingMidExchangeCancelsTheUpstreamCallAndFreesTheEndpointsSlot() {
        Cluster c = cluster("a");
        Http1Connection client = connect(outbound(c));
        client.request("GET", "/slow", "");
        InMemoryUpstream.Call call = upstream.call(0);
        assertThat(endpoint(c, "a").inFlight()).isEqualTo(1);

        client.channel.close();

        assertThat(call.cancelled).isTrue();
        assertThat(endpoint(c, "a").inFlight()).isZero();
        assertThat(c.outboundLimit().inFlight()).isZero();
        assertThat(metrics.outbound.inFlight()).isZero();
        // An answer that was already on its way is dropped (and released) rather than written anywhere.
        call.answer(200, "late");
        assertThat(upstream.calls).hasSize(1);
    }

    @Test
    void theClientClosingWhileItsRequestWaitsForCapacityLeavesNoSlotTaken() {
        Cluster c = new Cluster("provider", Balancer.named("least-request"), 16, Duration.ofSeconds(1));
        c.update(List.of(new Endpoint("provider", "a", "10.0.0.1", 7001, 1, 1, Map.of())));
        c.policy(ServicePolicy.DEFAULT.withOutboundLimit(ServicePolicy.ConcurrencyLimit.OUTBOUND_OFF)); // queue, not 503
        PolicyStack stack = outbound(c);
        Http1Connection first = connect(stack);
        Http1Connection second = connect(stack);
        first.request("GET", "/slow", "");
        second.request("GET", "/queued", "");
        assertThat(c.queued()).isEqualTo(1);

        second.channel.close();
        upstream.call(0).answer(200, "slow");

        assertThat(first.answer().status()).isEqualTo(200);
        assertThat(upstream.calls).as("the slot freed is not used for a client that left").hasSize(1);
        assertThat(endpoint(c, "a").inFlight()).isZero();
    }

    @Test
    void anAnswerCutAfterItsHeadClosesTheClientConnection() {
        Cluster c = cluster("a");
        Http1Connection client = connect(outbound(c));
        client.request("GET", "/stream", "");
        InMemoryUpstream.Call call = upstream.call(0);

        call.answerHead(200, "part");

        String started = client.rawOutbound();
        assertThat(started).startsWith("HTTP/1.1 200 OK\r\n").containsIgnoringCase("transfer-encoding: chunked")
                .contains("part");
        assertThat(client.isOpen()).isTrue();

        call.reset(false);

        assertThat(client.isOpen()).as("HTTP/1.1 can only say 'cut short' by closing").isFalse();
        assertThat(client.rawOutbound()).as("no last chunk: the client must not take it for a whole answer")
                .doesNotContain("0\r\n\r\n");
        assertThat(metrics.streamsReset.sum()).isEqualTo(1);
        assertThat(endpoint(c, "a").inFlight()).isZero();
    }

    @Test
    void anAnswerOfUnknownLengthIsRelayedChunkedAndTheUpstreamIsCreditedForWhatWasWritten() {
        Http1Connection client = connect(outbound(cluster("a")));
        client.request("GET", "/stream", "");
        InMemoryUpstream.Call call = upstream.call(0);

        call.answerHead(200, "one,");
        call.answerData("two,", false);
        call.answerData("three", true);

        String raw = client.rawOutbound();
        assertThat(raw).startsWith("HTTP/1.1 200 OK\r\n").containsIgnoringCase("transfer-encoding: chunked")
                .contains("\r\n4\r\none,\r\n4\r\ntwo,\r\n5\r\nthree\r\n").endsWith("\r\n0\r\n\r\n");
        assertThat(call.consumed).as("every piece written before the last is credited back").isEqualTo(8);
        assertThat(client.isOpen()).isTrue();
    }

    // ---- request bodies that stream ----

    private static String text(char c, int n) {
        return String.valueOf(c).repeat(n);
    }

    @Test
    void aBodyLargerThanOnePieceStreamsUpstreamPieceByPieceAndEndsWithTheLast() {
        Cluster c = cluster("a");
        Http1Connection client = connect(outbound(c));
        String p1 = text('a', 16 * 1024);
        String p2 = text('b', 16 * 1024);
        String p3 = text('c', 16 * 1024);
        RequestHead head = Http1Connection.head("POST", "/upload", "content-length", Integer.toString(3 * 16 * 1024));

        client.send(head, client.piece(p1)); // the body does not all come with the head: the exchange starts without it
        InMemoryUpstream.Call call = upstream.call(0);
        assertThat(call.heads).isEqualTo(1);
        assertThat(call.pieces.getFirst().end()).as("the head does not end the request").isFalse();
        assertThat(call.body()).isEqualTo(p1);

        client.send(client.piece(p2));
        client.send(client.piece(p3), Http1Messages.END);

        assertThat(call.body()).isEqualTo(p1 + p2 + p3);
        assertThat(call.pieces.getLast().end()).isTrue();
        assertThat(call.pieces).filteredOn(InMemoryUpstream.Piece::end).hasSize(1);
        assertThat(upstream.calls).hasSize(1);

        call.answer(200, "stored");

        assertThat(client.answer().body()).isEqualTo("stored");
        assertThat(client.isOpen()).isTrue();
        assertThat(endpoint(c, "a").inFlight()).isZero();
    }

    @Test
    void aStreamedBodySendsNoEmptyPieceUpstream() {
        Http1Connection client = connect(outbound(cluster("a")));
        client.send(Http1Connection.head("POST", "/upload", "content-length", "6"), client.piece("ab"));
        client.send(client.piece("cd"));
        client.send(client.piece("ef"), Http1Messages.END);

        InMemoryUpstream.Call call = upstream.call(0);
        assertThat(call.body()).isEqualTo("abcdef");
        assertThat(call.pieces.subList(1, call.pieces.size())).as("pieces after the head's")
                .extracting(InMemoryUpstream.Piece::text).doesNotContain("");
        call.answer(200, "ok");
    }

    @Test
    void aSlowUpstreamPausesReadingTheClientUntilItCanTakeMore() {
        Http1Connection client = connect(outbound(cluster("a")));
        client.send(Http1Connection.head("POST", "/upload", "content-length", "9"), client.piece("abc"));
        InMemoryUpstream.Call call = upstream.call(0);
        call.writable = false;

        client.send(client.piece("def"));
        client.send(client.piece("ghi"), Http1Messages.END);

        assertThat(call.body()).as("held while the upstream cannot take it").isEqualTo("abc");
        assertThat(call.awaitedWritable).isPositive();
        assertThat(client.channel.config().isAutoRead()).isFalse();

        call.writable = true;
        call.listener.onWritable();

        assertThat(call.body()).isEqualTo("abcdefghi");
        assertThat(call.ended()).isTrue();
        call.answer(200, "ok");
        assertThat(client.answer().status()).isEqualTo(200);
    }

    // ---- deadlines ----

    /**
     * Runs {@code body} on a thread of its own. DeadlineTimer keeps one timer per thread (a Worker loop's own) and binds
     * it to the first loop that asks for it on that thread; every EmbeddedChannel runs on the test's thread, so a
     * test whose deadline must fire takes a fresh thread, whose timer ticks on this test's channel.
     */
    private static void onFreshThread(ThrowingRunnable body) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().name("exchange-test-deadline").start(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join(TimeUnit.SECONDS.toMillis(20));
        assertThat(t.isAlive()).as("the test body finished in time").isFalse();
        if (failure.get() instanceof AssertionError e) {
            throw e;
        } else if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aDeadlinePassedBeforeAnyAnswerGives504TimeoutCancelsTheCallAndFreesTheSlot() throws Exception {
        Cluster c = cluster("a", "b");
        c.policy(new ServicePolicy(Duration.ofMillis(100), ServicePolicy.RetryPolicy.DEFAULT,
                ServicePolicy.OutlierPolicy.DEFAULT, 0, 0, 0));
        onFreshThread(() -> {
            Http1Connection client = connect(outbound(c));
            client.request("GET", "/slow", "");
            InMemoryUpstream.Call call = upstream.call(0);
            assertThat(Long.parseLong(call.fieldsAtSend.get("x-weft-deadline-ms"))).isBetween(1L, 100L);

            List<Answer> answers = List.of();
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (answers.isEmpty() && System.nanoTime() < giveUp) {
                Thread.sleep(10);
                client.runDueTasks();
                answers = client.answers();
            }

            assertThat(answers).hasSize(1);
            Answer a = answers.getFirst();
            assertThat(a.status()).isEqualTo(504);
            assertThat(a.header("x-weft-error")).isEqualTo("timeout");
            assertThat(call.cancelled).as("the upstream stops working on it").isTrue();
            assertThat(upstream.calls).as("a timeout is not retried: the budget is spent").hasSize(1);
            assertThat(inFlight(c)).isZero();
            assertThat(c.timeouts()).isEqualTo(1);
            assertThat(client.isOpen()).isTrue();
            call.answer(200, "too late"); // dropped and released
            assertThat(client.answers()).isEmpty();
        });
    }
}
