package dev.weft.registry.etcd;

import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Policy documents live under /weft/v1/policies/ and reach every watcher, as with the embedded registry. */
class EtcdPolicyTest {

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    @Test
    void aStoredPolicyReachesEveryWatcherAndAReplacementReplacesIt() throws Exception {
        EtcdCluster cluster = etcd.single();
        try (Registry writer = Registries.open(cluster.url()); Registry sidecar = Registries.open(cluster.url())) {
            AtomicReference<Map<String, String>> seen = new AtomicReference<>();
            try (Watch w = sidecar.watchPolicies(seen::set)) {
                await().atMost(Duration.ofSeconds(5)).until(() -> seen.get() != null);
                assertThat(seen.get()).isEmpty();
                writer.putPolicy("resilience", "services:\n  provider:\n    timeout: 2s\n");
                await().atMost(Duration.ofSeconds(2)).until(() -> seen.get().containsKey("resilience"));
                writer.putPolicy("resilience", "services:\n  provider:\n    timeout: 3s\n");
                await().atMost(Duration.ofSeconds(2)).until(() -> seen.get().get("resilience").contains("3s"));
            }
            assertThat(cluster.etcdctl("get", "--prefix", "/weft/v1/policies/", "--keys-only")).contains("/weft/v1/policies/resilience");
        }
    }
}
