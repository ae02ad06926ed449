package dev.weft.dataplane.exchange;

import dev.weft.dataplane.authz.AuthorizationPolicy;
import dev.weft.dataplane.authz.AuthorizationPolicy.Action;
import dev.weft.dataplane.authz.AuthorizationPolicy.Rule;
import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.exchange.Http1Connection.Answer;
import dev.weft.dataplane.http.Http1Messages;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.registry.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The authorization phase in the real inbound stack ({@link PolicyStack#inbound}), behind the real HTTP/1.1
 * downstream in an EmbeddedChannel, with the app in memory: what a denied request gets, that the app never sees
 * it, that it is counted and traced, and that it spends none of the rate limit allowed callers share.
 */
class InboundAuthorizationTest {
    private final SidecarMetrics metrics = new SidecarMetrics();
    private final InMemoryUpstream app = new InMemoryUpstream();
    private final List<Http1Connection> connections = new ArrayList<>();
    private final List<String> traceEnds = new ArrayList<>();
    private final ExchangeObserver recording = (direction, localService, method, path, headers, peer, startNanos) -> new ExchangeTrace() {
        @Override
        public void end(int status, long bytesIn, long bytesOut, String error, long nanos) {
            traceEnds.add(status + " " + error);
        }
    };

    private static final AuthorizationPolicy NO_ADMIN_FROM_WEB = AuthorizationPolicy.of(true, List.of(
            new Rule("no-admin-from-web", Action.DENY, List.of("web"), List.of("/admin"), List.of("POST"))));

    @AfterEach
    void finishAndCheckBuffers() {
        connections.forEach(Http1Connection::finish);
        connections.forEach(Http1Connection::assertPiecesReleased);
        app.assertAnswersReleased();
    }

    private Http1Connection provider(ServicePolicy policy) {
        Cluster c = new Cluster("provider", Balancer.named("least-request"), 16, Duration.ofSeconds(1));
        c.update(List.of(new Endpoint("provider", "app", "127.0.0.1", 8080, 1, 8, Map.of())));
        c.policy(policy);
        Http1Connection conn = new Http1Connection(PolicyStack.inbound(c, app, Collaborator.named("event-loop"),
                metrics, recording, "provider"));
        connections.add(conn);
        return conn;
    }

    private static void call(Http1Connection c, String caller, String method, String path) {
        c.send(caller == null ? Http1Connection.head(method, path)
                : Http1Connection.head(method, path, "x-weft-caller", caller), Http1Messages.END);
    }

    @Test
    void aDeniedRequestIsAnswered403ForbiddenNamingItsRuleCountedAndTracedAndTheAppNeverSeesIt() {
        Http1Connection peer = provider(ServicePolicy.DEFAULT.withAuthorization(NO_ADMIN_FROM_WEB));

        call(peer, "web", "POST", "/admin/users");
        Answer a = peer.answer();
        assertThat(a.status()).isEqualTo(403);
        assertThat(a.header("x-weft-error")).isEqualTo("forbidden");
        assertThat(a.body()).isEqualTo("forbidden by rule no-admin-from-web\n");
        assertThat(app.calls).as("the app never sees a denied request").isEmpty();
        assertThat(metrics.authzDenied.get("no-admin-from-web").sum()).isEqualTo(1);
        assertThat(traceEnds).containsExactly("403 forbidden");
        assertThat(metrics.inbound.meshErrors()).isEqualTo(1);

        call(peer, "consumer", "POST", "/admin/users");
        app.call(0).answer(200, "done");
        assertThat(peer.answer().status()).as("another caller goes through").isEqualTo(200);
        assertThat(metrics.authzDenied).containsOnlyKeys("no-admin-from-web");
    }

    @Test
    void theDefaultDeniesWhatNoRuleAllowsAndIsCountedUnderDefault() {
        Http1Connection peer = provider(ServicePolicy.DEFAULT.withAuthorization(AuthorizationPolicy.of(false, List.of(
                new Rule("consumers", Action.ALLOW, List.of("consumer"), null, null)))));

        call(peer, null, "GET", "/orders");
        Answer a = peer.answer();
        assertThat(a.status()).isEqualTo(403);
        assertThat(a.body()).startsWith("forbidden by rule default");
        call(peer, "consumer", "GET", "/orders");
        app.call(0).answer(200, "ok");
        assertThat(peer.answer().status()).isEqualTo(200);
        assertThat(metrics.authzDenied.get(AuthorizationPolicy.DEFAULT_RULE).sum()).isEqualTo(1);
    }

    @Test
    void deniedRequestsSpendNoneOfTheRateLimitTheAllowedCallersShare() {
        // One request per second for the whole service, a burst of one: had the denied requests taken a token,
        // the allowed caller's request after them would be answered 429.
        ServicePolicy limited = new ServicePolicy(Duration.ofSeconds(15), ServicePolicy.RetryPolicy.DEFAULT,
                ServicePolicy.OutlierPolicy.DEFAULT, 1, 1, 0).withAuthorization(NO_ADMIN_FROM_WEB);
        Http1Connection peer = provider(limited);

        for (int i = 0; i < 5; i++) {
            call(peer, "web", "POST", "/admin");
            assertThat(peer.answer().status()).isEqualTo(403);
        }
        call(peer, "consumer", "GET", "/orders");
        app.call(0).answer(200, "ok");
        assertThat(peer.answer().status()).isEqualTo(200);
        assertThat(metrics.authzDenied.get("no-admin-from-web").sum()).isEqualTo(5);
    }

    @Test
    void aNewPolicyOnTheAppsClusterIsInForceForTheNextRequest() {
        Cluster c = new Cluster("provider", Balancer.named("least-request"), 16, Duration.ofSeconds(1));
        c.update(List.of(new Endpoint("provider", "app", "127.0.0.1", 8080, 1, 8, Map.of())));
        Http1Connection peer = new Http1Connection(PolicyStack.inbound(c, app, Collaborator.named("event-loop"),
                metrics, recording, "provider"));
        connections.add(peer);

        call(peer, "web", "POST", "/admin");
        app.call(0).answer(200, "ok");
        assertThat(peer.answer().status()).isEqualTo(200);
        c.policy(ServicePolicy.DEFAULT.withAuthorization(NO_ADMIN_FROM_WEB));
        call(peer, "web", "POST", "/admin");
        assertThat(peer.answer().status()).isEqualTo(403);
        assertThat(app.calls).hasSize(1);
    }
}
