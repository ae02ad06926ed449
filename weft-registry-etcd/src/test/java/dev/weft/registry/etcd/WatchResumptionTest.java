package dev.weft.registry.etcd;

import com.fasterxml.jackson.databind.ObjectMapper;
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
 * A sidecar cut off from etcd while the service changes must come back with exactly the current list: no missed
 * delete left behind as a phantom endpoint, no old event replayed as new. The watching sidecar talks to one member
 * only; killing that member cuts it off while the other two keep a quorum and take the changes.
 */
class WatchResumptionTest {

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    private static final Duration TTL = Duration.ofSeconds(3);

    private static Endpoint endpoint(String id, int weight) {
        return new Endpoint("provider", id, "127.0.0.1", 7000 + id.charAt(1), weight, 0, Map.of());
    }

    /** What each test does while the watcher is away, from a client of the two members that stay up. */
    private record Scene(EtcdCluster cluster, Registry writer, Registry watching, Recorder watcher,
                         Registration p1, Registration p2) implements AutoCloseable {
        @Override
        public void close() {
            writer.close();
            watching.close();
        }
    }

    private Scene watcherCutOffAfterHistory(EtcdCluster cluster) throws Exception {
        Registry writer = Registries.open(EtcdCluster.url(cluster.members.subList(1, 3)));
        Registry watching = Registries.open(cluster.member(0).url());
        Recorder watcher = new Recorder();
        watching.watch("provider", watcher);
        // History before the cut: p9 comes and goes. A resume from too early a revision would bring it back.
        Registration p9 = registered(writer.register(endpoint("p9", 1), TTL));
        await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(watcher.ids()).containsExactly("p9"));
        p9.close();
        Registration p1 = registered(writer.register(endpoint("p1", 1), TTL));
        Registration p2 = registered(writer.register(endpoint("p2", 1), TTL));
        registered(writer.register(endpoint("p3", 1), TTL));
        await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(watcher.ids())
                .containsExactly("p1", "p2", "p3"));

        cluster.member(0).kill();
        await().atMost(Duration.ofSeconds(5)).until(() -> !watching.health().connected());
        // If the killed member led, the changes below wait for the next leader: a deregistration during the
        // election would fall back to lease expiry, which is correct but not the history this test writes.
        cluster.leader(Duration.ofSeconds(15));
        return new Scene(cluster, writer, watching, watcher, p1, p2);
    }

    /** Changes while the watcher is away: a delete, a new instance, an instance that changed its weight. */
    private static void changeWhileAway(Scene s) throws Exception {
        s.p1().close();
        assertThat(s.cluster().etcdctl("get", "--prefix", "/weft/v1/services/provider/p1")).as("p1 deleted").isEmpty();
        registered(s.writer().register(endpoint("p4", 1), TTL));
        s.p2().close();
        registered(s.writer().register(endpoint("p2", 5), TTL));
    }

    private static final List<Endpoint> AFTER = List.of(endpoint("p2", 5), endpoint("p3", 1), endpoint("p4", 1));

    @Test
    void a_reconnecting_watcher_gets_exactly_the_changes_it_missed() throws Exception {
        try (Scene s = watcherCutOffAfterHistory(etcd.cluster(3))) {
            int seenBefore = s.watcher().history.size();
            changeWhileAway(s);

            s.cluster().member(0).restart();

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(s.watcher().history).last()
                    .isEqualTo(AFTER));
            List<List<String>> afterReconnect = s.watcher().idHistory().subList(seenBefore, s.watcher().history.size());
            assertThat(afterReconnect).as("lists delivered after the reconnect").noneMatch(ids -> ids.contains("p9"))
                    .noneMatch(ids -> ids.contains("p1"));
        }
    }

    @Test
    void a_watcher_whose_revision_was_compacted_away_lists_again_and_keeps_no_phantom() throws Exception {
        try (Scene s = watcherCutOffAfterHistory(etcd.cluster(3))) {
            int seenBefore = s.watcher().history.size();
            changeWhileAway(s);
            long revision = new ObjectMapper().readTree(s.cluster().etcdctl("get", "--prefix", "/weft/", "-w", "json"))
                    .path("header").path("revision").asLong();
            s.cluster().etcdctl("compact", String.valueOf(revision));

            s.cluster().member(0).restart();

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(s.watcher().history).last()
                    .isEqualTo(AFTER));
            // The events are gone, so the watcher cannot step through them: one fresh list, the exact one.
            assertThat(s.watcher().history.subList(seenBefore, s.watcher().history.size())).containsExactly(AFTER);
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                    .until(() -> s.watcher().history.size() == seenBefore + 1);
        }
    }

    private static Registration registered(Registration r) throws InterruptedException {
        assertThat(r.awaitRegistered(Duration.ofSeconds(5))).as("registered: " + r).isTrue();
        return r;
    }
}
