package dev.weft.registry.etcd;

import dev.weft.dataplane.Sidecar;
import dev.weft.registry.Endpoint;
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
 * A mesh on a 3-member etcd cluster while members die: sidecars in this JVM carry load through the consumer sidecar
 * while the leader is killed with SIGKILL, and while two of three members are (quorum lost). A separate watcher
 * records every list it gets, to show the view stayed exact throughout, not just at the end.
 */
class ClusterFailoverTest {

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    private static final List<String> PROVIDERS = List.of("provider-1", "provider-2", "provider-3");

    @Test
    void killing_the_leader_under_load_fails_no_request_and_keeps_every_registration() throws Exception {
        EtcdCluster cluster = etcd.cluster(3);
        try (EtcdMesh mesh = new EtcdMesh(cluster.url()).start(3); Registry observer = Registries.open(cluster.url())) {
            Recorder watcher = new Recorder();
            observer.watch("provider", watcher);
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(watcher.ids()).isEqualTo(PROVIDERS));

            try (EtcdMesh.Load load = new EtcdMesh.Load(mesh.upstreamPort(), 8, Duration.ofSeconds(60))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> load.ok.get() >= 200);

                EtcdCluster.Member leader = cluster.leader(Duration.ofSeconds(5));
                leader.kill();
                EtcdCluster.Member next = cluster.leader(Duration.ofSeconds(15));
                // Past a whole lease TTL after the kill: a lease that was going to be lost is lost by now.
                long okAtKill = load.ok.get();
                Thread.sleep(EtcdMesh.LEASE_TTL.plusSeconds(1).toMillis());
                assertThat(load.ok.get() - okAtKill).as("requests answered after the kill").isGreaterThan(100);
                assertThat(next).isNotSameAs(leader);

                Thread.sleep(500);
                load.stop();
                assertThat(load.failed.get()).as("failed requests: " + load.failures).isZero();
            }
            // Every provider stayed registered and reachable, and the watcher never saw one go.
            assertThat(watcher.idHistory()).containsOnly(PROVIDERS);
            await().atMost(Duration.ofSeconds(5)).until(() -> mesh.providers.stream().allMatch(Sidecar::isReady));
            assertThat(mesh.servedBy).allSatisfy((id, n) -> assertThat(n.get()).as(id).isPositive());

            // The view stays exact: a change made through the new leader reaches the watcher.
            try (Registry late = Registries.open(cluster.url())) {
                late.register(new Endpoint("provider", "provider-4", "127.0.0.1", 7004, 1, 0, Map.of()),
                        EtcdMesh.LEASE_TTL);
                await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(watcher.ids())
                        .containsExactly("provider-1", "provider-2", "provider-3", "provider-4"));
            }
        }
    }

    @Test
    void with_quorum_lost_traffic_flows_to_the_last_known_endpoints_and_the_view_converges_once_it_is_back()
            throws Exception {
        EtcdCluster cluster = etcd.cluster(3);
        try (EtcdMesh mesh = new EtcdMesh(cluster.url()).start(3); Registry observer = Registries.open(cluster.url())) {
            Recorder watcher = new Recorder();
            observer.watch("provider", watcher);
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(watcher.ids()).isEqualTo(PROVIDERS));

            try (EtcdMesh.Load load = new EtcdMesh.Load(mesh.upstreamPort(), 8, Duration.ofSeconds(60))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> load.ok.get() >= 200);

                EtcdCluster.Member leader = cluster.leader(Duration.ofSeconds(5));
                EtcdCluster.Member follower = cluster.members.stream().filter(m -> m != leader).findFirst()
                        .orElseThrow();
                leader.kill();
                follower.kill();

                // The survivor has no leader: no write, no linearizable read, no lease renewal anywhere.
                await().atMost(Duration.ofSeconds(5)).until(() -> !observer.health().connected());
                long okAtLoss = load.ok.get();
                Thread.sleep(EtcdMesh.LEASE_TTL.plusSeconds(1).toMillis());
                assertThat(load.ok.get() - okAtLoss).as("requests answered without quorum").isGreaterThan(100);
                assertThat(watcher.idHistory()).as("no list may shrink while etcd cannot say").containsOnly(PROVIDERS);

                leader.restartInBackground();
                follower.restartInBackground();
                leader.awaitServing();
                follower.awaitServing();

                // Converged: every sidecar registered again (a new lease after a TTL unrenewed) and healthy.
                await().atMost(Duration.ofSeconds(15)).until(() -> mesh.providers.stream().allMatch(Sidecar::isReady)
                        && mesh.consumer.isReady() && observer.health().connected());
                Thread.sleep(500);
                load.stop();
                assertThat(load.failed.get()).as("failed requests: " + load.failures).isZero();
            }
            assertThat(watcher.idHistory()).containsOnly(PROVIDERS);
            try (Registry late = Registries.open(cluster.url())) {
                Recorder fresh = new Recorder();
                late.watch("provider", fresh);
                await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(fresh.ids()).isEqualTo(PROVIDERS));
                late.register(new Endpoint("provider", "provider-4", "127.0.0.1", 7004, 1, 0, Map.of()),
                        EtcdMesh.LEASE_TTL);
                await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(watcher.ids())
                        .containsExactly("provider-1", "provider-2", "provider-3", "provider-4"));
            }
        }
    }
}
