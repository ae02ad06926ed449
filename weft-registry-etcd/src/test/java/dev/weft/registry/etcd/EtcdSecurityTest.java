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
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The two ways operators secure etcd: TLS with client certificates, and user/password with a role per prefix. */
class EtcdSecurityTest {

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    private static final Endpoint P1 = new Endpoint("provider", "p1", "127.0.0.1", 7001, 1, 0, Map.of());

    @Test
    void a_sidecar_registers_and_watches_over_tls_with_a_client_certificate() throws Exception {
        TestCertificates pki = new TestCertificates(etcd.tempDir("pki"), "weft-test");
        TestCertificates.Issued server = pki.server("etcd");
        TestCertificates.Issued client = pki.client("weft-sidecar");
        EtcdCluster cluster = etcd.tls(new EtcdCluster.Tls(server.cert(), server.key(), pki.caFile));
        String url = cluster.url() + "?ca=" + pki.caFile + "&cert=" + client.cert() + "&key=" + client.key();

        try (Registry instance = Registries.open(url); Registry sidecar = Registries.open(url)) {
            AtomicReference<List<Endpoint>> seen = new AtomicReference<>();
            sidecar.watch("provider", (service, endpoints) -> seen.set(endpoints));
            Registration registration = instance.register(P1, Duration.ofSeconds(3));

            assertThat(registration.awaitRegistered(Duration.ofSeconds(10))).as(instance.health().toString()).isTrue();
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(seen.get()).containsExactly(P1));
            assertThat(sidecar.health().connected()).isTrue();
        }
    }

    @Test
    void a_client_without_a_certificate_is_refused_and_health_says_why() throws Exception {
        TestCertificates pki = new TestCertificates(etcd.tempDir("pki"), "weft-test");
        TestCertificates.Issued server = pki.server("etcd");
        EtcdCluster cluster = etcd.tls(new EtcdCluster.Tls(server.cert(), server.key(), pki.caFile));

        try (Registry anonymous = Registries.open(cluster.url() + "?ca=" + pki.caFile)) {
            Registration registration = anonymous.register(P1, Duration.ofSeconds(3));

            assertThat(registration.awaitRegistered(Duration.ofSeconds(2))).isFalse();
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> {
                assertThat(anonymous.health().connected()).isFalse();
                assertThat(anonymous.health().lastError()).contains("127.0.0.1:" + cluster.member(0).clientPort)
                        .containsIgnoringCase("bad_certificate").contains("check the TLS options"); // JDK or BoringSSL
            });
        }
    }

    @Test
    void a_user_whose_role_may_only_use_the_weft_prefix_can_register_and_watch() throws Exception {
        EtcdCluster cluster = etcd.single();
        // The commands docs/operations.md gives operators.
        cluster.etcdctl("user", "add", "root:root-pw");
        cluster.etcdctl("role", "add", "weft");
        cluster.etcdctl("role", "grant-permission", "weft", "--prefix=true", "readwrite", "/weft/");
        cluster.etcdctl("user", "add", "weft:weft-pw");
        cluster.etcdctl("user", "grant-role", "weft", "weft");
        cluster.etcdctl("auth", "enable");

        try (Registry instance = Registries.open(cluster.url() + "?user=weft&password=weft-pw");
             Registry sidecar = Registries.open(cluster.url() + "?user=weft&password=weft-pw")) {
            AtomicReference<List<Endpoint>> seen = new AtomicReference<>();
            sidecar.watch("provider", (service, endpoints) -> seen.set(endpoints));
            Registration registration = instance.register(P1, Duration.ofSeconds(3));

            assertThat(registration.awaitRegistered(Duration.ofSeconds(10))).as(instance.health().toString()).isTrue();
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(seen.get()).containsExactly(P1));

            registration.close();
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(seen.get()).isEmpty());
        }
    }

    @Test
    void a_wrong_password_is_reported_as_such() throws Exception {
        EtcdCluster cluster = etcd.single();
        cluster.etcdctl("user", "add", "root:root-pw");
        cluster.etcdctl("auth", "enable");

        try (Registry registry = Registries.open(cluster.url() + "?user=root&password=wrong")) {
            Registration registration = registry.register(P1, Duration.ofSeconds(3));

            assertThat(registration.awaitRegistered(Duration.ofSeconds(2))).isFalse();
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() ->
                    assertThat(registry.health().lastError()).contains("check user/password"));
        }
    }
}
