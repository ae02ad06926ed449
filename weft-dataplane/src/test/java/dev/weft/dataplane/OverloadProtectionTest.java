package dev.weft.dataplane;

import dev.weft.dataplane.resilience.ServicePolicy;
import org.junit.jupiter.api.Test;

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
 * The overload guards, over real sockets: the outbound limit (the caller's sidecar refuses, with 503 at once, what
 * it has beyond its limit in flight to a service), the inbound concurrency limit (a sidecar sheds what its app cannot
 * take, with 503 at once, instead of queueing it) and the cap on connections per endpoint (circuit breaking: fail
 * fast when the cap is reached). Behaviour only: who got which answer, what was
 * counted, what reached the app; no timing.
 */
class OverloadProtectionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** The default policy with an adaptive inbound limit of at most {@code max}, and no retries. */
    private static ServicePolicy limitedTo(int max) {
        return new ServicePolicy(Duration.ofSeconds(15), new ServicePolicy.RetryPolicy(1, 0.2, 10, true),
                ServicePolicy.OutlierPolicy.DEFAULT, 0, 0, 0)
                .withConcurrencyLimit(new ServicePolicy.ConcurrencyLimit(true, 1, max, 0));
    }

    @Test
    void requestsBeyondTheInboundLimitAreShed503AtOnceAndNeverReachTheApp() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            apply(provider, Map.of("provider", limitedTo(2)));
            int inbound = MeshFixture.port(provider, "inbound");
            List<Future<RawHttp.Response>> slow = holdTwoSlowRequests(clients, app,
                () -> get(inbound, "/hold"));

            RawHttp.Response shed = get(inbound, "/echo");
            assertThat(shed.status()).isEqualTo(503);
            assertThat(shed.header("x-weft-error")).isEqualTo("inbound-limit");
            assertThat(shed.body()).contains("weft: inbound concurrency limit 2 reached");
            assertThat(app.maxInFlight.get()).as("the app never saw more than the limit").isEqualTo(2);

            app.release();
            for (Future<RawHttp.Response> f : slow) {
                assertThat(f.get(15, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
            assertThat(get(inbound, "/echo").status()).as("admitted again once the app has room").isEqualTo(200);
            String metrics = get(MeshFixture.port(provider, "admin"), "/metrics").body();
            assertThat(metrics).contains("weft_app_shed_total 1").contains("weft_app_concurrency_limit 2");
            String config = get(MeshFixture.port(provider, "admin"), "/config").body();
            assertThat(config).contains("\"concurrencyLimit\" : \"adaptive\"").contains("\"shed\" : 1");
        }
    }

    @Test
    void aShedRequestIsRetriedByTheCallersSidecarOnAnotherInstanceAndOnlyFailsWhenAllAreFull() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp a = new TestApp(); TestApp b = new TestApp();
             TestApp consumerApp = new TestApp(); ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            // Each provider registers room for 10, but its own sidecar lets only 1 through to its app.
            Sidecar pa = mesh.provider("provider", "a", a.address(), 1, 10);
            Sidecar pb = mesh.provider("provider", "b", b.address(), 1, 10);
            ServicePolicy one = limitedTo(1);
            apply(pa, Map.of("provider", one));
            apply(pb, Map.of("provider", one));
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            // Non-idempotent POSTs, retried only because a shed request never reached an app.
            apply(consumer, Map.of("provider", new ServicePolicy(Duration.ofSeconds(15),
                    new ServicePolicy.RetryPolicy(3, 10.0, 100, true), ServicePolicy.OutlierPolicy.DEFAULT, 0, 0, 0)));
            int port = MeshFixture.port(consumer, "upstream provider");
            List<Future<RawHttp.Response>> slow = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                slow.add(clients.submit(() -> post(port, "/hold")));
                int n = i + 1;
                await().atMost(WAIT).until(() -> a.inFlight.get() + b.inFlight.get() == n);
            }
            assertThat(a.inFlight.get()).as("one request at each instance").isEqualTo(1);

            RawHttp.Response third = post(port, "/echo");
            assertThat(third.status()).isEqualTo(503);
            assertThat(third.header("x-weft-error")).isEqualTo("inbound-limit");
            a.release();
            b.release();
            for (Future<RawHttp.Response> f : slow) {
                assertThat(f.get(15, TimeUnit.SECONDS).status()).as("shed on the way, then served elsewhere")
                        .isEqualTo(200);
            }
            assertThat(a.maxInFlight.get()).isEqualTo(1);
            assertThat(b.maxInFlight.get()).isEqualTo(1);
        }
    }

    @Test
    void theConnectionCapPerEndpointFailsFastWhenReachedAndIsCounted() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            // A fixed limit of --capacity 10, so only the connection cap of 1 can refuse the second request.
            apply(provider, Map.of("provider", ServicePolicy.DEFAULT
                    .withConcurrencyLimit(ServicePolicy.ConcurrencyLimit.FIXED).withMaxConnections(1)));
            int inbound = MeshFixture.port(provider, "inbound");
            Future<RawHttp.Response> slow = clients.submit(() -> get(inbound, "/hold"));
            await().atMost(WAIT).until(() -> app.inFlight.get() == 1);

            RawHttp.Response refused = get(inbound, "/echo");
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.header("x-weft-error")).isEqualTo("circuit-open");
            assertThat(refused.body()).contains("max-connections");
            assertThat(app.maxInFlight.get()).isEqualTo(1);

            app.release();
            assertThat(slow.get(15, TimeUnit.SECONDS).status()).isEqualTo(200);
            // The one connection is back in a Worker's pool; a refusal on another Worker has that one closed, so a
            // later request goes through.
            await().atMost(WAIT).until(() -> get(inbound, "/echo").status() == 200);
            String metrics = get(MeshFixture.port(provider, "admin"), "/metrics").body();
            assertThat(metrics).containsPattern(
                    "weft_upstream_circuit_open_total\\{upstream=\"app\",limit=\"max_connections\"} [1-9]");
        }
    }

    @Test
    void beyondTheOutboundLimitTheCallersSidecarAnswers503AtOnceAndNothingReachesTheApp() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp(); ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            // Learned between 2 and 2: the limit is exactly 2, whatever the latency says, so the test needs no timing.
            apply(consumer, Map.of("provider", ServicePolicy.DEFAULT
                    .withOutboundLimit(new ServicePolicy.ConcurrencyLimit(true, 2, 2, 0))));
            int port = MeshFixture.port(consumer, "upstream provider");
            assertThat(post(port, "/echo").status()).as("the provider is known").isEqualTo(200);
            // TestApp counts a request after its answer is sent: wait for that count before taking the baseline.
            await().atMost(WAIT).until(() -> app.served.get() == 1);
            int servedBefore = app.served.get();
            List<Future<RawHttp.Response>> slow = holdTwoSlowRequests(clients, app,
                () -> post(port, "/hold"));

            RawHttp.Response shed = post(port, "/echo");
            assertThat(shed.status()).isEqualTo(503);
            assertThat(shed.header("x-weft-error")).isEqualTo("outbound-limit");
            assertThat(shed.header("x-weft-unprocessed")).isEqualTo("true");
            assertThat(shed.body()).contains("weft: outbound concurrency limit 2 to service 'provider' reached");
            assertThat(app.maxInFlight.get()).as("the app never saw more than the limit").isEqualTo(2);

            app.release();
            for (Future<RawHttp.Response> f : slow) {
                assertThat(f.get(15, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
            await().atMost(WAIT).until(() -> app.served.get() - servedBefore >= 2);
            assertThat(app.served.get() - servedBefore).as("the shed request never reached the app").isEqualTo(2);
            assertThat(post(port, "/echo").status()).as("admitted again once below the limit").isEqualTo(200);
            String metrics = get(MeshFixture.port(consumer, "admin"), "/metrics").body();
            assertThat(metrics)
                    .contains("weft_upstream_rejected_total{upstream=\"provider\",reason=\"outbound_limit\"} 1")
                    .contains("weft_upstream_concurrency_limit{upstream=\"provider\"} 2");
            String config = get(MeshFixture.port(consumer, "admin"), "/config").body();
            assertThat(config).contains("\"mode\" : \"adaptive\"").contains("\"shed\" : 1");
        }
    }

    @Test
    void byDefaultWhatTheEndpointsCannotTakeIsAnswered503AtOnceInsteadOfQueued() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp(); ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            mesh.provider("provider", "p1", app.address(), 1, 2); // registers capacity 2
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            await().atMost(WAIT).until(() -> post(port, "/echo").status() == 200);
            List<Future<RawHttp.Response>> slow = holdTwoSlowRequests(clients, app,
                () -> post(port, "/hold"));

            RawHttp.Response shed = post(port, "/echo");
            assertThat(shed.status()).isEqualTo(503);
            assertThat(shed.header("x-weft-error")).isEqualTo("outbound-limit");
            app.release();
            for (Future<RawHttp.Response> f : slow) {
                assertThat(f.get(15, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
            String metrics = get(MeshFixture.port(consumer, "admin"), "/metrics").body();
            assertThat(metrics).contains("weft_upstream_queue_depth{upstream=\"provider\"} 0")
                    .contains("weft_upstream_concurrency_limit{upstream=\"provider\"} 2");
        }
    }

    @Test
    void aLoadBelowTheOutboundLimitIsNeverShedEvenWhenItsLatencyJumps() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp consumerApp = new TestApp(); ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            mesh.provider("provider", "p1", app.address(), 1, 100);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            // Learned, with a floor of 20: latency going from nothing to 300 ms may cut the limit, never below 20.
            apply(consumer, Map.of("provider", ServicePolicy.DEFAULT
                    .withOutboundLimit(new ServicePolicy.ConcurrencyLimit(true, 20, 100, 0))));
            int port = MeshFixture.port(consumer, "upstream provider");
            List<Future<RawHttp.Response>> all = new ArrayList<>();
            for (int round = 0; round < 6; round++) {
                List<Future<RawHttp.Response>> wave = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    String path = round % 2 == 0 ? "/echo" : "/slow?ms=300";
                    wave.add(clients.submit(() -> post(port, path)));
                }
                for (Future<RawHttp.Response> f : wave) {
                    f.get(15, TimeUnit.SECONDS);
                }
                all.addAll(wave);
            }
            for (Future<RawHttp.Response> f : all) {
                assertThat(f.get(15, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
            String metrics = get(MeshFixture.port(consumer, "admin"), "/metrics").body();
            assertThat(metrics)
                    .contains("weft_upstream_rejected_total{upstream=\"provider\",reason=\"outbound_limit\"} 0")
                    .contains("weft_upstream_in_flight{upstream=\"provider\"} 0");
        }
    }

    /**
     * Sends two requests the app holds until {@link TestApp#release()} and waits until it holds both (no timing: the
     * wait has a timeout).
     */
    private static List<Future<RawHttp.Response>> holdTwoSlowRequests(ExecutorService clients, TestApp app,
                                                                      Callable<RawHttp.Response> call) {
        List<Future<RawHttp.Response>> slow = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            slow.add(clients.submit(call));
        }
        await().atMost(WAIT).until(() -> app.inFlight.get() == 2);
        return slow;
    }

    /**
     * Applies policies once the sidecar has had the registry's first (empty) policy snapshot, which would otherwise
     * replace them with the defaults when it arrives late on a busy machine.
     */
    private static void apply(Sidecar s, Map<String, ServicePolicy> policies) {
        await().atMost(WAIT).until(() -> !s.policyStatus().startsWith("defaults"));
        s.applyPolicies(policies);
    }

    private static RawHttp.Response get(int port, String path) throws Exception {
        try (RawHttp c = new RawHttp(port)) {
            return c.send("GET " + path + " HTTP/1.1\r\nHost: provider\r\n\r\n").read();
        }
    }

    private static RawHttp.Response post(int port, String path) throws Exception {
        try (RawHttp c = new RawHttp(port)) {
            return c.send("POST " + path + " HTTP/1.1\r\nHost: provider\r\nContent-Length: 2\r\n\r\nhi").read();
        }
    }
}
