package dev.weft.registry.etcd;

import dev.weft.control.RegistryContractTest;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import org.junit.jupiter.api.BeforeAll;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The registry contract, the same suite the embedded control plane passes, against a real single-member etcd reached
 * through {@code etcd://} as the data plane reaches it.
 */
class EtcdRegistryContractTest extends RegistryContractTest {

    @BeforeAll
    static void needsEtcd() {
        assumeTrue(EtcdCluster.binaryAvailable(), EtcdCluster.MISSING);
    }

    @Override
    protected Backend startBackend(Path dataDir) throws Exception {
        return new EtcdBackend(EtcdCluster.start(1, dataDir, EtcdCluster.Timing.FAST, null));
    }

    static final class EtcdBackend implements Backend {
        private final EtcdCluster etcd;

        EtcdBackend(EtcdCluster etcd) {
            this.etcd = etcd;
        }

        @Override
        public Registry newClient() {
            return Registries.open(etcd.url());
        }

        /** SIGKILL: etcd's WAL is on disk, so the restart below finds every lease and key. */
        @Override
        public void stop() {
            etcd.member(0).kill();
        }

        @Override
        public void restart() throws Exception {
            etcd.member(0).restart();
        }

        /** Revokes the lease of every registered key, as an operator with etcdctl would. */
        @Override
        public void loseAllLeases() throws Exception {
            try (Client admin = Client.builder().endpoints(etcd.member(0).clientUrl()).build()) {
                Set<Long> leases = new TreeSet<>();
                for (KeyValue kv : admin.getKVClient().get(ByteSequence.from("/weft/", StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).build()).get(5, TimeUnit.SECONDS).getKvs()) {
                    if (kv.getLease() != 0) {
                        leases.add(kv.getLease());
                    }
                }
                for (long lease : leases) {
                    admin.getLeaseClient().revoke(lease).get(5, TimeUnit.SECONDS);
                }
            }
        }

        @Override
        public void close() {
            etcd.close();
        }
    }
}
