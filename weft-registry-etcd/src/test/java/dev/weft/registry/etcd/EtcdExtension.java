package dev.weft.registry.etcd;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * JUnit fixture for tests against real etcd: {@code @RegisterExtension final EtcdExtension etcd = new EtcdExtension();}
 * then {@link #single()} or {@link #cluster(int)} inside a test. Every member it started is killed after the test and
 * its data dirs removed. Tests are skipped, saying why, only when the etcd binary is not installed.
 */
final class EtcdExtension implements BeforeEachCallback, AfterEachCallback {
    private final List<EtcdCluster> clusters = new ArrayList<>();
    private final List<Path> dirs = new ArrayList<>();

    @Override
    public void beforeEach(ExtensionContext context) {
        assumeTrue(EtcdCluster.binaryAvailable(), EtcdCluster.MISSING);
    }

    /** One member with etcd's smallest lease TTL (1 s), for tests that count seconds of expiry. */
    EtcdCluster single() throws Exception {
        return start(1, EtcdCluster.Timing.FAST, null);
    }

    /** {@code size} members with etcd's default raft timing (leader elected ~1-2 s after the leader dies). */
    EtcdCluster cluster(int size) throws Exception {
        return start(size, EtcdCluster.Timing.DEFAULT, null);
    }

    /** One member serving clients over TLS only, requiring a client certificate signed by {@code tls.clientCa()}. */
    EtcdCluster tls(EtcdCluster.Tls tls) throws Exception {
        return start(1, EtcdCluster.Timing.FAST, tls);
    }

    /** A directory removed after the test. */
    Path tempDir(String name) throws Exception {
        Path dir = Files.createTempDirectory("weft-etcd-" + name);
        dirs.add(dir);
        return dir;
    }

    private EtcdCluster start(int size, EtcdCluster.Timing timing, EtcdCluster.Tls tls) throws Exception {
        EtcdCluster cluster = EtcdCluster.start(size, tempDir("cluster"), timing, tls);
        clusters.add(cluster);
        return cluster;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        clusters.forEach(EtcdCluster::close);
        clusters.clear();
        dirs.forEach(EtcdCluster::deleteTree);
        dirs.clear();
    }
}
