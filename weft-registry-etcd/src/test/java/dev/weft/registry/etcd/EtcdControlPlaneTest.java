package dev.weft.registry.etcd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlBackendProvider;
import dev.weft.control.ControlPlane;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The control plane started on etcd ({@code ./weft control --registry etcd://...}): its API reads and writes the keys
 * {@code etcd://} sidecars use, so sidecars on {@code weft://control} and on etcd directly see the same services and
 * policies, and {@code etcdctl} agrees with both.
 */
class EtcdControlPlaneTest {
    private static final Duration TTL = Duration.ofSeconds(3);
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final EtcdExtension etcd = new EtcdExtension();

    private final HttpClient http = HttpClient.newHttpClient();
    private ControlPlane control;
    private String base;

    /** The operator token the control plane takes: with etcd it is not in local mode, so every read needs it too. */
    private static final String OPERATOR = "test-operator-token-" + java.util.UUID.randomUUID();
    private dev.weft.control.ca.CertificateAuthority ca;

    /** A control plane with an operator token and a CA (for the join tokens of the sidecars registering through it). */
    private ControlPlane newControlPlane() throws Exception {
        ca = dev.weft.control.ca.CertificateAuthority.open(etcd.tempDir("ca"),
                dev.weft.control.ca.CertificateAuthority.Settings.defaults());
        return new ControlPlane().authority(ca).adminToken(dev.weft.control.ca.AdminToken.inMemory(OPERATOR));
    }

    private java.nio.file.Path tokenFile(String service) {
        try {
            return java.nio.file.Files.writeString(java.nio.file.Files.createTempFile(etcd.tempDir("tokens"), service,
                    ".token"), ca.createToken(service, Duration.ofMinutes(10), false).join().token());
        } catch (Exception e) {
            throw new IllegalStateException("cannot write a join token for " + service, e);
        }
    }

    private Registry viaControl() {
        return Registries.open("weft://127.0.0.1:" + control.address().getPort(),
                dev.weft.registry.auth.ControlCredentials.bearer(OPERATOR));
    }

    private EtcdCluster startControlPlaneOnEtcd() throws Exception {
        EtcdCluster cluster = etcd.single();
        control = newControlPlane();
        // Through ServiceLoader, by scheme, as `./weft control --registry` opens it.
        InetSocketAddress bound = control.start(new InetSocketAddress("127.0.0.1", 0),
                ControlBackendProvider.open(cluster.url(), Duration.ofSeconds(10)));
        base = "http://127.0.0.1:" + bound.getPort();
        return cluster;
    }

    @AfterEach
    void stopControlPlane() {
        if (control != null) {
            control.close();
        }
        http.close();
    }

    private static Endpoint endpoint(String id, int port) {
        return new Endpoint("provider", id, "127.0.0.1", port, 1, 0, Map.of());
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + OPERATOR);
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode get(String path) throws Exception {
        HttpResponse<String> r = send("GET", path, null);
        assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @Test
    void on_etcd_the_control_plane_is_not_in_local_mode_so_even_loopback_reads_need_credentials() throws Exception {
        startControlPlaneOnEtcd();
        HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/services"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).as(anonymous.body()).isEqualTo(401);
        assertThat(anonymous.body()).contains("no-credentials").contains("reveals the mesh's topology");
        assertThat(send("GET", "/v1/services", null).statusCode()).as("with the operator token").isEqualTo(200);
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/v1/health")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).as("probes stay open").isEqualTo(200);
    }

    @Test
    void a_sidecar_registered_in_etcd_directly_is_listed_by_the_control_api() throws Exception {
        EtcdCluster cluster = startControlPlaneOnEtcd();
        try (Registry sidecar = Registries.open(cluster.url());
             Registration p1 = sidecar.register(endpoint("p1", 7001), TTL)) {
            assertThat(p1.awaitRegistered(Duration.ofSeconds(5))).isTrue();

            JsonNode services = get("/v1/services");
            assertThat(services.path("services").toString()).contains("\"name\":\"provider\"", "\"endpoints\":1");
            JsonNode snapshot = get("/v1/services/provider");
            assertThat(snapshot.path("endpoints").get(0).path("id").asText()).isEqualTo("p1");
            assertThat(snapshot.path("endpoints").get(0).path("port").asInt()).isEqualTo(7001);
            // The lease the sidecar keeps alive in etcd is the one the control plane reports.
            JsonNode leases = get("/v1/leases").path("leases");
            assertThat(leases.get(0).path("id").asText()).isEqualTo(
                    String.format("%016x", Long.parseUnsignedLong(cluster.leaseOf("/weft/v1/services/provider/p1"), 16)));
            assertThat(leases.get(0).path("endpoints").toString()).contains("provider/p1");
            JsonNode health = get("/v1/health");
            assertThat(health.path("backend").asText()).isEqualTo("etcd");
            assertThat(health.path("services").asInt()).isEqualTo(1);
        }
    }

    @Test
    void sidecars_on_the_control_plane_and_on_etcd_see_the_same_endpoints_and_etcdctl_agrees() throws Exception {
        EtcdCluster cluster = startControlPlaneOnEtcd();
        try (Registry viaControl = viaControl();
             Registry viaEtcd = Registries.open(cluster.url())) {
            Recorder controlWatcher = new Recorder();
            Recorder etcdWatcher = new Recorder();
            viaControl.watch("provider", controlWatcher);
            viaEtcd.watch("provider", etcdWatcher);
            Registration a = viaControl.register(endpoint("a", 7001), TTL);
            Registration b = viaEtcd.register(endpoint("b", 7002), TTL);
            assertThat(a.awaitRegistered(Duration.ofSeconds(5))).isTrue();
            assertThat(b.awaitRegistered(Duration.ofSeconds(5))).isTrue();
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                assertThat(controlWatcher.ids()).containsExactly("a", "b");
                assertThat(etcdWatcher.ids()).containsExactly("a", "b");
            });
            // Registered through the control plane, bound to an etcd lease like any etcd:// sidecar's key.
            assertThat(cluster.leaseOf("/weft/v1/services/provider/a")).isNotIn(null, "0");
            assertThat(cluster.etcdctl("get", "/weft/v1/services/provider/a", "--print-value-only"))
                    .contains("\"host\":\"127.0.0.1\"", "\"port\":7001");

            // Kept alive through the control plane for longer than its TTL.
            Thread.sleep(TTL.plusSeconds(1).toMillis());
            assertThat(etcdWatcher.ids()).containsExactly("a", "b");

            a.close();   // deregisters through the control plane: the etcd lease is revoked
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                assertThat(controlWatcher.ids()).containsExactly("b");
                assertThat(etcdWatcher.ids()).containsExactly("b");
            });
            assertThat(cluster.leaseOf("/weft/v1/services/provider/a")).isNull();
            b.close();
        }
    }

    @Test
    void requests_flow_from_a_consumer_sidecar_on_etcd_to_provider_sidecars_registered_through_the_control_plane()
            throws Exception {
        EtcdCluster cluster = startControlPlaneOnEtcd();
        try (EtcdMesh mesh = new EtcdMesh("weft://127.0.0.1:" + control.address().getPort(), cluster.url())
                .tokenFiles(this::tokenFile).start(2)) {
            assertThat(cluster.etcdctl("get", "--prefix", "/weft/v1/services/provider/", "--keys-only"))
                    .contains("/weft/v1/services/provider/provider-1", "/weft/v1/services/provider/provider-2");
            try (EtcdMesh.Load load = new EtcdMesh.Load(mesh.upstreamPort(), 4, Duration.ofSeconds(30))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> mesh.servedBy.values().stream()
                        .allMatch(n -> n.get() > 0));
                load.stop();
                assertThat(load.failed.get()).as("failures: %s", load.failures).isZero();
            }
        }
    }

    @Test
    void a_lease_a_sidecar_took_is_owned_on_every_control_plane_of_the_etcd_read_by_its_id() throws Exception {
        EtcdCluster cluster = startControlPlaneOnEtcd();
        String lease = JSON.readTree(send(base, "PUT", "/v1/leases", "{\"ttlMillis\": 30000}",
                "Bearer " + ca.createToken("provider", Duration.ofMinutes(5), false).join().token()).body())
                .path("leaseId").asText();
        String ownerKey = "/weft/v1/leases/" + lease;
        assertThat(cluster.etcdctl("get", ownerKey, "--print-value-only").strip()).isEqualTo("provider");
        assertThat(Long.parseUnsignedLong(cluster.leaseOf(ownerKey), 16)).as("bound to the lease itself")
                .isEqualTo(Long.parseUnsignedLong(lease, 16));

        // Another control plane on the same etcd, with its own CA and tokens, never saw the grant.
        dev.weft.control.ca.CertificateAuthority otherCa = dev.weft.control.ca.CertificateAuthority.open(
                etcd.tempDir("other-ca"), dev.weft.control.ca.CertificateAuthority.Settings.defaults());
        ControlPlane other = new ControlPlane().authority(otherCa)
                .adminToken(dev.weft.control.ca.AdminToken.inMemory(OPERATOR));
        try {
            String otherBase = "http://127.0.0.1:" + other.start(new InetSocketAddress("127.0.0.1", 0),
                    ControlBackendProvider.open(cluster.url(), Duration.ofSeconds(10))).getPort();
            assertThat(send(otherBase, "GET", "/v1/leases", null, "Bearer " + OPERATOR).body())
                    .as("etcd cannot list a lease with no endpoints: the owner is found by the lease's id")
                    .doesNotContain(lease);
            String keepalive = "/v1/leases/" + lease + "/keepalive";
            HttpResponse<String> consumer = send(otherBase, "PUT", keepalive, null,
                    "Bearer " + otherCa.createToken("consumer", Duration.ofMinutes(5), false).join().token());
            assertThat(consumer.statusCode()).as(consumer.body()).isEqualTo(403);
            assertThat(consumer.body()).contains("not-lease-owner", "service 'provider'");
            String provider = "Bearer " + otherCa.createToken("provider", Duration.ofMinutes(5), false).join().token();
            assertThat(send(otherBase, "PUT", keepalive, null, provider).statusCode()).isEqualTo(200);

            assertThat(send(otherBase, "DELETE", "/v1/leases/" + lease, null, provider).statusCode()).isEqualTo(200);
            assertThat(cluster.etcdctl("get", ownerKey, "--print-value-only")).as("gone with its lease").isBlank();
            HttpResponse<String> gone = send(otherBase, "PUT", keepalive, null, provider);
            assertThat(gone.statusCode()).as(gone.body()).isEqualTo(404);
            assertThat(gone.body()).contains("unknown-lease");
        } finally {
            other.close();
        }
    }

    private HttpResponse<String> send(String to, String method, String path, String body, String authorization)
            throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(to + path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", authorization)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void a_policy_put_through_the_control_api_is_in_etcd_and_reaches_sidecars_of_both_kinds() throws Exception {
        EtcdCluster cluster = startControlPlaneOnEtcd();
        try (Registry viaControl = viaControl();
             Registry viaEtcd = Registries.open(cluster.url())) {
            AtomicReference<Map<String, String>> seenViaControl = new AtomicReference<>();
            AtomicReference<Map<String, String>> seenViaEtcd = new AtomicReference<>();
            try (Watch w1 = viaControl.watchPolicies(seenViaControl::set);
                 Watch w2 = viaEtcd.watchPolicies(seenViaEtcd::set)) {
                await().atMost(Duration.ofSeconds(5)).until(() -> seenViaControl.get() != null
                        && seenViaEtcd.get() != null);
                String doc = "services:\n  provider:\n    timeout: 2s\n";

                HttpResponse<String> put = send("PUT", "/v1/policies/resilience", doc);
                assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
                assertThat(JSON.readTree(put.body()).path("policies").path("resilience").asText()).isEqualTo(doc);
                assertThat(cluster.etcdctl("get", "/weft/v1/policies/resilience", "--print-value-only"))
                        .contains("timeout: 2s");
                await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
                    assertThat(seenViaControl.get()).containsEntry("resilience", doc);
                    assertThat(seenViaEtcd.get()).containsEntry("resilience", doc);
                });

                // A policy written into etcd by another tool reaches the control plane's long poll too.
                cluster.etcdctl("put", "/weft/v1/policies/limits", "services: {}");
                await().atMost(Duration.ofSeconds(3)).untilAsserted(() ->
                        assertThat(seenViaControl.get()).containsKeys("resilience", "limits"));

                HttpResponse<String> delete = send("DELETE", "/v1/policies/resilience", null);
                assertThat(delete.statusCode()).as(delete.body()).isEqualTo(200);
                await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
                    assertThat(seenViaControl.get()).containsOnlyKeys("limits");
                    assertThat(seenViaEtcd.get()).containsOnlyKeys("limits");
                });
                assertThat(cluster.etcdctl("get", "--prefix", "/weft/v1/policies/", "--keys-only"))
                        .doesNotContain("resilience");
            }
        }
    }

    @Test
    void an_etcd_outage_answers_503_naming_etcd_and_is_counted_and_the_control_plane_recovers() throws Exception {
        EtcdCluster cluster = startControlPlaneOnEtcd();
        cluster.member(0).kill();

        HttpResponse<String> list = send("GET", "/v1/services", null);
        assertThat(list.statusCode()).isEqualTo(503);
        JsonNode error = JSON.readTree(list.body());
        assertThat(error.path("code").asText()).isEqualTo("registry-unavailable");
        assertThat(error.path("error").asText()).contains("list services: etcd 127.0.0.1:", "retry when etcd answers");
        HttpResponse<String> put = send("PUT", "/v1/policies/p", "services: {}");
        assertThat(put.statusCode()).isEqualTo(503);
        assertThat(send("PUT", "/v1/leases", "{\"ttlMillis\": 3000}").statusCode()).isEqualTo(503);

        HttpResponse<String> metrics = send("GET", "/metrics", null);
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("weft_control_registry_errors_total{backend=\"etcd\"} 3");
        await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(send("GET", "/metrics", null).body())
                .contains("weft_control_registry_up{backend=\"etcd\"} 0"));

        cluster.member(0).restart();
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                assertThat(send("GET", "/v1/services", null).statusCode()).isEqualTo(200));
        // The store notes etcd answering on its event thread, after the call's answer went out: wait for it.
        await().atMost(Duration.ofSeconds(15)).until(() -> send("GET", "/metrics", null).body()
                .contains("weft_control_registry_up{backend=\"etcd\"} 1"));
        assertThat(send("GET", "/metrics", null).body()).contains("weft_control_registry_up{backend=\"etcd\"} 1");
    }

    @Test
    void over_tls_the_control_plane_starts_with_a_client_certificate_and_without_one_says_why_it_cannot()
            throws Exception {
        TestCertificates pki = new TestCertificates(etcd.tempDir("pki"), "weft-test");
        TestCertificates.Issued server = pki.server("etcd");
        TestCertificates.Issued client = pki.client("weft-control");
        EtcdCluster cluster = etcd.tls(new EtcdCluster.Tls(server.cert(), server.key(), pki.caFile));

        assertThatThrownBy(() -> ControlBackendProvider.open(cluster.url() + "?ca=" + pki.caFile,
                Duration.ofSeconds(1)))
                .isInstanceOf(IOException.class)
                .hasMessageMatching("(?is).*bad_certificate.*") // the JDK says bad_certificate, BoringSSL BAD_CERTIFICATE
                .hasMessageContaining("check the TLS options");

        control = newControlPlane();
        InetSocketAddress bound = control.start(new InetSocketAddress("127.0.0.1", 0), ControlBackendProvider.open(
                cluster.url() + "?ca=" + pki.caFile + "&cert=" + client.cert() + "&key=" + client.key(),
                Duration.ofSeconds(10)));
        base = "http://127.0.0.1:" + bound.getPort();
        assertThat(send("PUT", "/v1/policies/p", "services: {}\n").statusCode()).isEqualTo(200);
        assertThat(get("/v1/health").path("status").asText()).isEqualTo("ok");
    }

    @Test
    void a_control_plane_cannot_start_on_an_etcd_it_cannot_reach_and_says_which() throws Exception {
        // Held until the open has given up: a port picked and closed could be taken by another bind meanwhile.
        try (HeldPort away = LoopbackPorts.held()) {
            int port = away.port();
            String url = "etcd://127.0.0.1:" + port;
            assertThatThrownBy(() -> ControlBackendProvider.open(url, Duration.ofSeconds(1)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("gave up after 1000 ms")
                    .hasMessageContaining("list /weft/v1/policies/")
                    .hasMessageContaining("etcd 127.0.0.1:" + port)
                    .hasMessageContaining("is etcd running");
        }
    }
}
