package dev.weft.control;

import dev.weft.registry.Endpoint;
import dev.weft.registry.EndpointListener;
import dev.weft.registry.Registration;
import dev.weft.registry.Registry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every registry backend must do, as the data plane relies on it. Each backend (the embedded control plane,
 * later etcd) extends this class once and supplies a {@link Backend}; the tests use only the
 * {@link Registry} API plus the backend's stop/restart/lose-leases hooks.
 */
public abstract class RegistryContractTest {

    /** One running backend; everything it stores lives under the data dir it was started with. */
    protected interface Backend extends AutoCloseable {
        /** A new client of this backend; the suite closes it after the test. */
        Registry newClient();

        /** Stops the backend abruptly from the clients' point of view; its persisted state stays. */
        void stop() throws Exception;

        /** Starts it again at the same address with the same state. */
        void restart() throws Exception;

        /** Makes the backend forget every lease and the endpoints bound to them, as after losing its state. */
        void loseAllLeases() throws Exception;

        @Override
        void close();
    }

    /** Starts a fresh, empty backend that keeps its state in {@code dataDir}. */
    protected abstract Backend startBackend(Path dataDir) throws Exception;

    protected static final Duration TTL = Duration.ofSeconds(3);
    protected static final Duration SHORT_TTL = Duration.ofSeconds(1);

    @TempDir
    Path dataDir;
    protected Backend backend;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    private static final Set<Class<?>> WARMED_UP = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void startFreshBackend() throws Exception {
        if (WARMED_UP.add(getClass())) {
            warmUp();
        }
        backend = startBackend(dataDir);
    }

    /**
     * One full round trip on a throwaway backend before the first test of a backend class: the one-second limits
     * below are about how fast the registry propagates changes, not how long a cold JVM on a busy two-core machine
     * takes to load and JIT the HTTP client, Jackson and Netty (over a second here).
     */
    private void warmUp() throws Exception {
        Path dir = Files.createTempDirectory("weft-registry-warm-up");
        try (Backend warm = startBackend(dir); Registry registry = warm.newClient()) {
            Recorder watcher = new Recorder();
            registry.watch("warm-up", watcher);
            Registration registration = registry.register(endpoint("warm-up", "w1", 7000), TTL);
            await().atMost(Duration.ofSeconds(30)).until(() -> watcher.ids() != null && watcher.ids().contains("w1"));
            registration.close();
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    @AfterEach
    void stopEverything() throws Exception {
        Collections.reverse(closeAfter);
        for (AutoCloseable c : closeAfter) {
            c.close();
        }
        backend.close();
    }

    protected Registry client() {
        Registry registry = backend.newClient();
        closeAfter.add(registry);
        return registry;
    }

    protected static Endpoint endpoint(String service, String id, int port) {
        return new Endpoint(service, id, "127.0.0.1", port, 1, 0, Map.of("zone", "test"));
    }

    /** Records every snapshot a watch delivers. */
    protected static final class Recorder implements EndpointListener {
        final List<List<Endpoint>> history = new CopyOnWriteArrayList<>();

        @Override
        public void onEndpoints(String service, List<Endpoint> endpoints) {
            history.add(endpoints);
        }

        List<String> ids() {
            if (history.isEmpty()) {
                return null;
            }
            return history.getLast().stream().map(Endpoint::id).toList();
        }
    }

    /**
     * Waits for the registry to acknowledge a registration. Registering happens in the background, so the time limits
     * of the tests start from the acknowledgement: they measure propagation, not a loaded machine's scheduling.
     */
    protected static Registration registered(Registration registration) throws InterruptedException {
        assertThat(registration.awaitRegistered(Duration.ofSeconds(5))).as("registered: " + registration).isTrue();
        return registration;
    }

    private static org.awaitility.core.ConditionFactory within(Duration limit) {
        return await().atMost(limit).pollInterval(Duration.ofMillis(20));
    }

    @Test
    void a_watcher_sees_a_new_registration_within_one_second() throws Exception {
        Recorder watcher = new Recorder();
        client().watch("provider", watcher);
        Endpoint p1 = endpoint("provider", "p1", 7001);

        registered(client().register(p1, TTL));

        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.history).isNotEmpty()
                .last().isEqualTo(List.of(p1)));
    }

    @Test
    void two_instances_of_a_service_are_both_listed() throws Exception {
        Recorder watcher = new Recorder();
        client().watch("provider", watcher);

        registered(client().register(endpoint("provider", "p1", 7001), TTL));
        registered(client().register(endpoint("provider", "p2", 7002), TTL));

        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1", "p2"));
    }

    @Test
    void closing_a_registration_removes_only_that_endpoint() throws Exception {
        Registry instances = client();
        Registration p1 = registered(instances.register(endpoint("provider", "p1", 7001), TTL));
        registered(instances.register(endpoint("provider", "p2", 7002), TTL));
        Recorder watcher = new Recorder();
        client().watch("provider", watcher);
        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1", "p2"));

        p1.close();

        assertThat(p1.isRegistered()).isFalse();
        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p2"));
    }

    @Test
    void an_instance_that_dies_without_deregistering_disappears_when_its_lease_expires() throws Exception {
        Registry doomed = client();
        registered(doomed.register(endpoint("provider", "p1", 7001), SHORT_TTL));
        Recorder watcher = new Recorder();
        client().watch("provider", watcher);
        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));

        doomed.close();   // heartbeats stop, nothing is deregistered: a killed sidecar

        within(SHORT_TTL.plusSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).isEmpty());
    }

    @Test
    void a_watcher_created_after_registration_gets_the_current_list_first() throws Exception {
        Endpoint p1 = endpoint("provider", "p1", 7001);
        registered(client().register(p1, TTL));

        Recorder watcher = new Recorder();
        client().watch("provider", watcher);

        within(Duration.ofSeconds(1)).until(() -> !watcher.history.isEmpty());
        assertThat(watcher.history.getFirst()).containsExactly(p1);
    }

    @Test
    void a_registration_whose_lease_was_lost_registers_again() throws Exception {
        Registration registration = registered(client().register(endpoint("provider", "p1", 7001), SHORT_TTL));
        Recorder watcher = new Recorder();
        client().watch("provider", watcher);
        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));

        backend.loseAllLeases();

        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.history)
                .anySatisfy(list -> assertThat(list).isEmpty()));
        within(SHORT_TTL.plusSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));
        assertThat(registration.awaitRegistered(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void watchers_keep_their_list_while_the_registry_is_down_and_resume_after_it_restarts() throws Exception {
        Registry instances = client();
        registered(instances.register(endpoint("provider", "p1", 7001), TTL));
        Registry sidecar = client();
        Recorder watcher = new Recorder();
        sidecar.watch("provider", watcher);
        within(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));
        int seenBeforeOutage = watcher.history.size();

        backend.stop();
        within(Duration.ofSeconds(2)).until(() -> !sidecar.health().connected());
        assertThat(sidecar.health().lastError()).isNotBlank();
        // Several reconnect attempts fail meanwhile; none of them may reach the listener.
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(1))
                .until(() -> watcher.history.size() == seenBeforeOutage);

        backend.restart();

        Recorder late = new Recorder();
        client().watch("provider", late);
        within(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(late.ids()).containsExactly("p1"));
        registered(instances.register(endpoint("provider", "p2", 7002), TTL));
        within(Duration.ofSeconds(6)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1", "p2"));
        assertThat(watcher.history).noneSatisfy(list -> assertThat(list).isEmpty());
        within(Duration.ofSeconds(1)).untilAsserted(() -> {
            assertThat(sidecar.health().connected()).isTrue();
            assertThat(sidecar.health().reconnects()).isGreaterThanOrEqualTo(1);
        });
    }

    @Test
    void health_reports_contact_with_the_registry() throws Exception {
        Registry registry = client();
        registered(registry.register(endpoint("provider", "p1", 7001), TTL));

        within(Duration.ofSeconds(1)).untilAsserted(() -> {
            assertThat(registry.health().connected()).isTrue();
            assertThat(registry.health().lastContact()).isNotNull();
            assertThat(registry.health().target()).isNotBlank();
        });
    }
}
