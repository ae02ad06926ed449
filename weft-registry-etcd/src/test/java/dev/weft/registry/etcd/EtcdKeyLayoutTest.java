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

/**
 * The key layout is an interface for people: what `etcdctl get --prefix` shows, and what an operator may write by
 * hand. Checked with the real etcdctl.
 */
class EtcdKeyLayoutTest {

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    @Test
    void etcdctl_get_prefix_shows_each_instance_as_a_key_with_its_endpoint_as_json_bound_to_its_lease()
            throws Exception {
        EtcdCluster cluster = etcd.single();
        try (Registry registry = Registries.open(cluster.url())) {
            Registration p1 = registry.register(new Endpoint("provider", "p1", "10.0.0.5", 7001, 2, 200,
                    Map.of("zone", "a")), Duration.ofSeconds(3));
            assertThat(p1.awaitRegistered(Duration.ofSeconds(5))).isTrue();

            assertThat(cluster.etcdctl("get", "--prefix", "/weft/")).isEqualTo("""
                    /weft/v1/services/provider/p1
                    {"service":"provider","id":"p1","host":"10.0.0.5","port":7001,"weight":2,"capacity":200,\
                    "metadata":{"zone":"a"}}
                    """);
            String lease = cluster.leaseOf("/weft/v1/services/provider/p1");
            assertThat(cluster.etcdctl("lease", "timetolive", "--keys", lease))
                    .contains("granted with TTL(3s)").contains("/weft/v1/services/provider/p1");
        }
    }

    @Test
    void an_endpoint_written_by_hand_with_only_host_and_port_is_discovered_with_default_weight() throws Exception {
        EtcdCluster cluster = etcd.single();
        try (Registry sidecar = Registries.open(cluster.url())) {
            Recorder watcher = new Recorder();
            sidecar.watch("legacy", watcher);

            cluster.etcdctl("put", "/weft/v1/services/legacy/db-1", "{\"host\":\"10.0.0.9\",\"port\":5432}");

            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(watcher.history).last()
                    .isEqualTo(List.of(new Endpoint("legacy", "db-1", "10.0.0.9", 5432, 1, 0, Map.of()))));
        }
    }

    @Test
    void unreadable_values_and_deeper_keys_are_ignored_without_hiding_the_rest_of_the_service() throws Exception {
        EtcdCluster cluster = etcd.single();
        try (Registry registry = Registries.open(cluster.url())) {
            assertThat(registry.register(new Endpoint("provider", "p1", "127.0.0.1", 7001, 1, 0, Map.of()),
                    Duration.ofSeconds(3)).awaitRegistered(Duration.ofSeconds(5))).isTrue();
            cluster.etcdctl("put", "/weft/v1/services/provider/p2", "{\"host\":\"127.0.0.1\",\"port\":7002}");
            cluster.etcdctl("put", "/weft/v1/services/provider/p3", "not json");
            cluster.etcdctl("put", "/weft/v1/services/provider/p4/extra", "{\"host\":\"127.0.0.1\",\"port\":7004}");
            Recorder late = new Recorder();
            registry.watch("provider", late);
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(late.ids()).containsExactly("p1", "p2"));

            cluster.etcdctl("put", "/weft/v1/services/provider/p2", "{\"host\":\"127.0.0.1\",\"port\":0}");

            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(late.ids()).containsExactly("p1"));
        }
    }

    @Test
    void a_key_deleted_by_hand_is_put_back_while_its_sidecar_lives() throws Exception {
        EtcdCluster cluster = etcd.single();
        try (Registry instance = Registries.open(cluster.url()); Registry sidecar = Registries.open(cluster.url())) {
            assertThat(instance.register(new Endpoint("provider", "p1", "127.0.0.1", 7001, 1, 0, Map.of()),
                    Duration.ofSeconds(3)).awaitRegistered(Duration.ofSeconds(5))).isTrue();
            Recorder watcher = new Recorder();
            sidecar.watch("provider", watcher);
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p1"));

            cluster.etcdctl("del", "/weft/v1/services/provider/p1");

            // Renewals come every TTL/3 = 1 s, each checking the key.
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(watcher.idHistory())
                    .containsSubsequence(List.of("p1"), List.of(), List.of("p1")));
            assertThat(watcher.ids()).containsExactly("p1");
        }
    }
}
