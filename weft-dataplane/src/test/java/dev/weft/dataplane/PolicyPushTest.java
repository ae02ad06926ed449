package dev.weft.dataplane;

import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Policies stored in the registry reach running sidecars within a second, under load, without a failed request. */
class PolicyPushTest {

    @Test
    void aPolicyStoredInTheRegistryIsAppliedUnderLoadWithinASecondWithoutAFailedRequest() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp(); TestApp consumerApp = new TestApp();
             Registry registry = Registries.open(mesh.registryUrl(), mesh.operator())) {
            mesh.provider("provider", "p1", app.address(), 1, 50);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger ok = new AtomicInteger();
            List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> load = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                load.add(Thread.ofVirtual().start(() -> {
                    while (running.get()) {
                        try {
                            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/echo"))
                                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                            if (r.statusCode() == 200) {
                                ok.incrementAndGet();
                            } else {
                                failures.add(r.statusCode() + " " + r.body());
                            }
                        } catch (Exception e) {
                            failures.add(e.toString());
                        }
                    }
                }));
            }
            Thread.sleep(500);
            registry.putPolicy("resilience", """
                    services:
                      provider:
                        timeout: 3s
                        retries: {attempts: 2}
                    """);
            // The bound: a stored policy is in force at every sidecar within a second.
            await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(10))
                    .until(() -> consumer.policyFor("provider").timeout().equals(Duration.ofSeconds(3)));
            Thread.sleep(500);
            running.set(false);
            for (Thread t : load) {
                t.join(Duration.ofSeconds(15));
            }
            assertThat(failures).isEmpty();
            assertThat(ok.get()).isPositive();
            assertThat(consumer.policyStatus()).startsWith("applied");
        }
    }

    @Test
    void anInvalidDocumentIsRejectedWholeAndThePreviousPoliciesStay() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp consumerApp = new TestApp();
             Registry registry = Registries.open(mesh.registryUrl(), mesh.operator())) {
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            registry.putPolicy("good", "services:\n  provider:\n    timeout: 4s\n");
            await().atMost(Duration.ofSeconds(2)).until(() -> consumer.policyFor("provider").timeout().equals(Duration.ofSeconds(4)));
            registry.putPolicy("bad", "services:\n  provider:\n    timeout: never\n");
            await().atMost(Duration.ofSeconds(2)).until(() -> consumer.policyStatus().startsWith("rejected"));
            assertThat(consumer.policyStatus()).contains("bad:3: key 'services.provider.timeout'");
            assertThat(consumer.policyFor("provider").timeout()).isEqualTo(Duration.ofSeconds(4));
        }
    }
}
