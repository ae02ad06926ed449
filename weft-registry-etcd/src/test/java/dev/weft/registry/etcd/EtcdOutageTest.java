package dev.weft.registry.etcd;

import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A sidecar while its only etcd member is down for longer than the lease TTL, and after it returns. */
class EtcdOutageTest {

    private static final Duration TTL = Duration.ofSeconds(3);

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    private static Endpoint endpoint(String id, int port) {
        return new Endpoint("provider", id, "127.0.0.1", port, 1, 0, Map.of());
    }

    @Test
    void after_an_outage_longer_than_the_ttl_it_registers_again_under_a_new_lease_and_watchers_catch_up()
            throws Exception {
        EtcdCluster cluster = etcd.single();
        String key = "/weft/v1/services/provider/p1";
        try (Registry instance = Registries.open(cluster.url()); Registry sidecar = Registries.open(cluster.url())) {
            Registration p1 = instance.register(endpoint("p1", 7001), TTL);
            assertThat(p1.awaitRegistered(Duration.ofSeconds(5))).isTrue();
            String firstLease = cluster.leaseOf(key);
            Recorder watcher = new Recorder();
            sidecar.watch("provider", watcher);
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));

            cluster.member(0).kill();

            // Unrenewed for a whole TTL: no longer claims to be registered. Watchers keep their list meanwhile.
            await().atMost(TTL.plusSeconds(2)).until(() -> !p1.isRegistered());
            await().atMost(Duration.ofSeconds(2)).until(() -> !sidecar.health().connected());
            Thread.sleep(1000);
            assertThat(watcher.idHistory()).containsExactly(List.of("p1"));

            cluster.member(0).restart();

            await().atMost(Duration.ofSeconds(5)).until(p1::isRegistered);
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> {
                assertThat(cluster.leaseOf(key)).isNotIn(firstLease, null, "0");
                // The old lease, which etcd kept alive for its new leader term, was given back.
                assertThat(cluster.etcdctl("lease", "timetolive", firstLease)).contains("already expired");
            });
            // Moving the key to a new lease left the endpoint as it was: nothing new to tell watchers.
            assertThat(watcher.idHistory()).containsExactly(List.of("p1"));

            instance.register(endpoint("p2", 7002), TTL);
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(watcher.ids())
                    .containsExactly("p1", "p2"));
            assertThat(watcher.idHistory()).containsExactly(List.of("p1"), List.of("p1", "p2"));
            assertThat(sidecar.health().connected()).isTrue();
            assertThat(sidecar.health().reconnects()).isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void a_sidecar_started_while_etcd_is_down_registers_and_discovers_once_it_is_up() throws Exception {
        EtcdCluster cluster = etcd.single();
        cluster.member(0).kill();
        try (Registry instance = Registries.open(cluster.url()); Registry sidecar = Registries.open(cluster.url())) {
            Registration p1 = instance.register(endpoint("p1", 7001), TTL);
            Recorder watcher = new Recorder();
            sidecar.watch("provider", watcher);
            // Until both clients have tried and failed (not a guessed time: their first attempt may be slow to fail).
            await().atMost(Duration.ofSeconds(10)).until(() -> instance.health().lastError() != null
                    && sidecar.health().lastError() != null);
            assertThat(p1.isRegistered()).isFalse();
            assertThat(watcher.history).as("nothing known yet, so nothing delivered").isEmpty();
            assertThat(sidecar.health().connected()).isFalse();
            assertThat(sidecar.health().lastError()).contains("is etcd running");

            cluster.member(0).restart();

            assertThat(p1.awaitRegistered(Duration.ofSeconds(5))).isTrue();
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));
        }
    }
}
