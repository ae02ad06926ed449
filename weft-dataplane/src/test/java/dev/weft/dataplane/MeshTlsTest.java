package dev.weft.dataplane;

import dev.weft.control.ca.Pem;
import dev.weft.dataplane.fuzz.WmpSequences;
import dev.weft.dataplane.security.WorkloadCertificate;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * mTLS on the mesh link between real sidecars and a real control plane and CA on loopback: requests carried over
 * TLS 1.3 with ALPN weft-wmp/1, the caller's identity taken from its certificate, one handshake per pooled connection,
 * and every kind of peer a strict inbound port refuses (plaintext, self-signed, no certificate, another trust domain,
 * expired, no ALPN), each counted by reason. Clients made by the test use the JDK's TLS and openssl, not BoringSSL.
 */
class MeshTlsTest {
    private static final String CALLER = "x-weft-caller";
    @TempDir
    Path dir;
    private TlsMesh mesh;

    @BeforeEach
    void startMesh() throws Exception {
        mesh = new TlsMesh(dir, Duration.ofHours(1));
    }

    @AfterEach
    void stopMesh() throws Exception {
        mesh.close();
    }

    @Test
    void twoStrictSidecarsCarryRequestsOverMutualTlsAndTheProviderTakesTheCallerFromTheCertificate() throws Exception {
        TestApp providerApp = mesh.app();
        Sidecar provider = mesh.sidecar("provider", "strict", providerApp, null);
        Sidecar consumer = mesh.sidecar("consumer", "strict", mesh.app(), "provider");
        URI caller = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/caller");

        // The app sends a forged caller; its own sidecar overwrites it, and the provider's takes it from the cert.
        HttpRequest forged = HttpRequest.newBuilder(caller).header(CALLER, "admin").timeout(Duration.ofSeconds(5))
                .build();
        await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(forged,
                HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
        assertThat(mesh.http.send(forged, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("consumer");
        assertThat(mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"ok\"}")).isBetween(1L, 2L);
        assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}")).isBetween(1L, 2L);
        assertThat(mesh.admin(provider, "/config")).contains("\"meshLinkEncrypted\" : true");

        // One handshake per pooled connection: a burst on the warm connections adds none on either side.
        for (int i = 0; i < 40; i++) {   // warm: every connection these requests need is dialled now
            mesh.http.send(forged, HttpResponse.BodyHandlers.discarding());
        }
        long clientBefore = mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"ok\"}");
        long serverBefore = mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}");
        HttpRequest echo = HttpRequest.newBuilder(caller.resolve("/echo")).timeout(Duration.ofSeconds(5)).build();
        int ok = 0;
        for (int i = 0; i < 500; i++) {
            ok += mesh.http.send(echo, HttpResponse.BodyHandlers.discarding()).statusCode() == 200 ? 1 : 0;
        }
        assertThat(ok).isEqualTo(500);
        assertThat(mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"ok\"}"))
                .isEqualTo(clientBefore);
        assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}"))
                .isEqualTo(serverBefore);
        assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"failed\"}")).isZero();

        // A peer speaking WMP itself with a mesh certificate for 'consumer' cannot claim another caller either.
        WorkloadCertificate cert = mesh.certificate("consumer");
        try (TlsPeer peer = new TlsPeer(MeshFixture.port(provider, "inbound"), cert.key(), cert.chain(),
                cert.trustBundle(), "weft-wmp/1")) {
            assertThat(peer.socket.getSession().getProtocol()).isEqualTo("TLSv1.3");
            assertThat(peer.socket.getApplicationProtocol()).isEqualTo("weft-wmp/1");
            assertThat(peer.serverLeaf().getSubjectAlternativeNames().toString())
                    .contains("spiffe://weft.local/service/provider");
            peer.send(get(1, "/caller", CALLER, "admin"));
            assertThat(peer.status(1)).isEqualTo(200);
            assertThat(peer.lastBody).isEqualTo("consumer");
        }
    }

    @Test
    void aSidecarStartedWithoutAModeIsStrictAndRefusesPlaintextWmpOnItsInboundPortCountingIt() throws Exception {
        TestApp app = mesh.app();
        Sidecar provider = mesh.sidecar("provider", null, app, null);
        assertThat(mesh.admin(provider, "/config")).contains("\"mtls\" : \"strict\"",
                "\"meshLinkEncrypted\" : true");
        int appRequestsBefore = app.served.get() - app.healthChecks.get();
        assertThat(plaintextAnswer(MeshFixture.port(provider, "inbound"),
                WmpSequences.encode(List.of(get(1, "/echo", CALLER, "consumer"))))).isEmpty();
        assertThat(mesh.metric(provider, "weft_tls_refused_total{side=\"server\",reason=\"plaintext\"}")).isEqualTo(1);
        assertThat(app.served.get() - app.healthChecks.get()).as("nothing reached the app")
                .isEqualTo(appRequestsBefore);
    }

    @Test
    void aStrictInboundPortRefusesPlaintextSelfSignedAndCertificateLessClientsAndCountsWhy() throws Exception {
        TestApp app = mesh.app();
        Sidecar provider = mesh.sidecar("provider", "strict", app, null);
        int port = MeshFixture.port(provider, "inbound");
        int appRequestsBefore = app.served.get() - app.healthChecks.get();

        // Plaintext WMP and plaintext HTTP/1.1: closed unanswered.
        assertThat(plaintextAnswer(port, WmpSequences.encode(List.of(get(1, "/echo", CALLER, "consumer")))))
                .isEmpty();
        assertThat(plaintextAnswer(port, "GET /echo HTTP/1.1\r\nhost: provider\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII))).isEmpty();
        assertThat(mesh.metric(provider, "weft_tls_refused_total{side=\"server\",reason=\"plaintext\"}")).isEqualTo(2);

        List<X509Certificate> roots = List.of(mesh.root());
        KeyPair keys = TlsMesh.keyPair();
        X509Certificate selfSigned = mesh.leaf(keys, "spiffe://weft.local/service/consumer",
                Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600), true);
        assertThat(refused(port, keys, selfSigned, roots, "weft-wmp/1")).isTrue();
        assertThat(mesh.metric(provider, "weft_tls_refused_total{side=\"server\",reason=\"untrusted\"}")).isEqualTo(1);

        try (TlsPeer none = new TlsPeer(port, null, List.of(), roots, "weft-wmp/1")) {
            none.send(get(1, "/echo"));
            assertThat(none.status(1)).isZero();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> mesh.metric(provider,
                "weft_tls_refused_total{side=\"server\",reason=\"no_certificate\"}") == 1);

        // A valid mesh certificate but no WMP in ALPN: refused after the handshake, counted as such.
        WorkloadCertificate cert = mesh.certificate("consumer");
        try (TlsPeer h2 = new TlsPeer(port, cert.key(), cert.chain(), roots, "h2")) {
            h2.send(get(1, "/echo"));
            assertThat(h2.status(1)).isZero();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> mesh.metric(provider,
                "weft_tls_refused_total{side=\"server\",reason=\"alpn\"}") == 1);
        assertThat(app.served.get() - app.healthChecks.get()).as("nothing reached the app")
                .isEqualTo(appRequestsBefore);
        assertThat(provider.isReady()).isTrue();
    }

    @Test
    void aCertificateOfAnotherTrustDomainOrAnExpiredOneIsRefusedEvenWhenSignedByTheMeshRoot() throws Exception {
        Sidecar provider = mesh.sidecar("provider", "strict", mesh.app(), null);
        int port = MeshFixture.port(provider, "inbound");
        List<X509Certificate> roots = List.of(mesh.root());
        Instant now = Instant.now();
        KeyPair keys = TlsMesh.keyPair();

        // The control: a certificate the test signs with the mesh's root is accepted when all is right.
        X509Certificate good = mesh.leaf(keys, "spiffe://weft.local/service/consumer", now.minusSeconds(60),
                now.plusSeconds(3600), false);
        try (TlsPeer peer = new TlsPeer(port, keys.getPrivate(), List.of(good), roots, "weft-wmp/1")) {
            peer.send(get(1, "/caller"));
            assertThat(peer.status(1)).isEqualTo(200);
            assertThat(peer.lastBody).isEqualTo("consumer");
        }

        X509Certificate otherDomain = mesh.leaf(keys, "spiffe://other.example/service/consumer", now.minusSeconds(60),
                now.plusSeconds(3600), false);
        assertThat(refused(port, keys, otherDomain, roots, "weft-wmp/1")).isTrue();
        assertThat(mesh.metric(provider, "weft_tls_refused_total{side=\"server\",reason=\"trust_domain\"}"))
                .isEqualTo(1);

        X509Certificate expired = mesh.leaf(keys, "spiffe://weft.local/service/consumer", now.minusSeconds(7200),
                now.minusSeconds(3600), false);
        assertThat(refused(port, keys, expired, roots, "weft-wmp/1")).isTrue();
        assertThat(mesh.metric(provider, "weft_tls_refused_total{side=\"server\",reason=\"expired\"}")).isEqualTo(1);

        X509Certificate notAService = mesh.leaf(keys, "spiffe://weft.local/admin/root", now.minusSeconds(60),
                now.plusSeconds(3600), false);
        assertThat(refused(port, keys, notAService, roots, "weft-wmp/1")).isTrue();
        assertThat(mesh.metric(provider, "weft_tls_refused_total{side=\"server\",reason=\"spiffe_id\"}")).isEqualTo(1);
        assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"failed\"}")).isEqualTo(3);
    }

    @Test
    void opensslSClientAgainstTheInboundPortShowsTheSidecarsSpiffeId() throws Exception {
        Sidecar provider = mesh.sidecar("provider", "strict", mesh.app(), null);
        WorkloadCertificate client = mesh.certificate("consumer");
        Files.writeString(dir.resolve("client.pem"), Pem.certificates(client.chain()));
        Files.writeString(dir.resolve("client.key"), Pem.privateKey(client.key()));
        Files.writeString(dir.resolve("bundle.pem"), Pem.certificates(client.trustBundle()));

        String out = run(null, "openssl", "s_client", "-connect", "127.0.0.1:" + MeshFixture.port(provider, "inbound"),
                "-tls1_3", "-alpn", "weft-wmp/1", "-cert", "client.pem", "-key", "client.key", "-CAfile", "bundle.pem",
                "-showcerts");
        assertThat(out).contains("Verify return code: 0 (ok)", "ALPN protocol: weft-wmp/1", "TLSv1.3");
        Matcher pem = Pattern.compile("-----BEGIN CERTIFICATE-----[\\s\\S]+?-----END CERTIFICATE-----\\n?")
                .matcher(out);
        assertThat(pem.find()).as(out).isTrue();
        Files.writeString(dir.resolve("server.pem"), pem.group());
        assertThat(run(null, "openssl", "x509", "-in", "server.pem", "-noout", "-ext", "subjectAltName"))
                .contains("URI:spiffe://weft.local/service/provider");
    }

    @Test
    void twoPermissiveSidecarsHoldingCertificatesTalkMutualTls() throws Exception {
        Sidecar provider = mesh.sidecar("provider", "permissive", mesh.app(), null);
        Sidecar consumer = mesh.sidecar("consumer", "permissive", mesh.app(), "provider");
        // Permissive gets its certificate in the background; a connection dialled before it arrives stays plaintext.
        await().atMost(Duration.ofSeconds(10)).until(() -> provider.identity().current() != null
                && consumer.identity().current() != null);
        URI uri = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/caller");
        HttpRequest forged = HttpRequest.newBuilder(uri).header(CALLER, "admin").timeout(Duration.ofSeconds(5)).build();
        await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(forged,
                HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
        assertThat(mesh.http.send(forged, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("consumer");
        assertThat(mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"ok\"}")).isPositive();
        assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}")).isPositive();
    }

    @Test
    void aPermissiveConnectionDialledBeforeTheCertificateArrivedIsReplacedByAnMtlsOne() throws Exception {
        Sidecar provider = mesh.sidecar("provider", "permissive", mesh.app(), null);
        await().atMost(Duration.ofSeconds(10)).until(() -> provider.identity().current() != null);
        // The consumer's token file is empty at first: no certificate, so it dials plaintext (counted failures).
        Path tokenFile = Files.writeString(dir.resolve("late.token"), "");
        SidecarConfig cfg = SidecarConfig.builder("consumer", mesh.app().address())
                .inbound(new java.net.InetSocketAddress("127.0.0.1", 0))
                .admin(new java.net.InetSocketAddress("127.0.0.1", 0)).registry(mesh.registryUrl()).workers(1)
                .upstreams(Map.of("provider", new java.net.InetSocketAddress("127.0.0.1", 0)))
                .meshConnectionsPerPeer(1).tokenFile(tokenFile).mtls("permissive").build();
        try (Sidecar consumer = new Sidecar(cfg)) {
            consumer.start();
            URI uri = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/caller");
            HttpRequest r = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build();
            await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(r,
                    HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
            assertThat(consumer.identity().current()).isNull();
            assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}")).isZero();

            Files.copy(mesh.tokenFile("consumer"), tokenFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            await().atMost(Duration.ofSeconds(15)).until(() -> consumer.identity().current() != null);
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> a = mesh.http.send(r, HttpResponse.BodyHandlers.ofString());
                assertThat(a.statusCode()).as(a.body()).isEqualTo(200);
                assertThat(a.body()).isEqualTo("consumer");
            }
            assertThat(mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"ok\"}"))
                    .isEqualTo(1);
            assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}"))
                    .isEqualTo(1);
            // The plaintext connection said GOAWAY and closed: the provider has only the mTLS one left.
            await().atMost(Duration.ofSeconds(5)).until(() -> mesh.metric(provider,
                    "weft_connections_open{kind=\"mesh_inbound\"}") == 1);
        }
    }

    @Test
    void aPermissiveSidecarWithACertificateStillServesAPlaintextPeerWithoutOne() throws Exception {
        TestApp app = mesh.app();
        Sidecar provider = mesh.sidecar("provider", "permissive", app, null);
        await().atMost(Duration.ofSeconds(10)).until(() -> provider.identity().current() != null);
        // A consumer without a token: no certificate, so it dials plaintext, which a permissive provider takes.
        TestApp consumerApp = mesh.app();
        SidecarConfig cfg = SidecarConfig.builder("consumer", consumerApp.address())
                .inbound(new java.net.InetSocketAddress("127.0.0.1", 0))
                .admin(new java.net.InetSocketAddress("127.0.0.1", 0)).registry(mesh.registryUrl()).workers(1)
                .upstreams(java.util.Map.of("provider", new java.net.InetSocketAddress("127.0.0.1", 0)))
                .mtls("permissive").build();
        try (Sidecar consumer = new Sidecar(cfg)) {
            consumer.start();
            URI uri = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/caller");
            HttpRequest r = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build();
            await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(r,
                    HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
            // Unverified: the caller's own sidecar named itself, as before mTLS.
            assertThat(mesh.http.send(r, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("consumer");
            assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"ok\"}")).isZero();
        }
    }

    @Test
    void theDiallingSideRefusesAPeerWhoseCertificateNamesAnotherServiceThanTheOneRegisteredAtItsAddress()
            throws Exception {
        TestApp billingApp = mesh.app();
        Sidecar billing = mesh.sidecar("billing", "strict", billingApp, null);
        Sidecar consumer = mesh.sidecar("consumer", "strict", mesh.app(), "provider");
        // A registration for 'provider' that points at billing's sidecar (the operator may register any service).
        try (Registry registry = Registries.open(mesh.registryUrl(), mesh.operator());
             Registration fake = registry.register(new Endpoint("provider", "fake-1", "127.0.0.1",
                     MeshFixture.port(billing, "inbound"), 1, 100, Map.of()), Duration.ofSeconds(10))) {
            URI uri = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/echo");
            HttpRequest r = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build();
            // Each request tries the endpoint (until it is ejected): the dial's handshake is refused.
            await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(r,
                    HttpResponse.BodyHandlers.ofString()).statusCode() == 503 && mesh.metric(consumer,
                    "weft_tls_refused_total{side=\"client\",reason=\"wrong_service\"}") > 0);
            assertThat(mesh.http.send(r, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(503);
            assertThat(billingApp.served.get() - billingApp.healthChecks.get()).as("nothing reached billing's app")
                    .isZero();
        }
    }

    @Test
    void offSpeaksNoTlsAtAllAndStrictRefusesThePlaintextHttp1MeshLinkAtStart() throws Exception {
        TestApp app = mesh.app();
        Sidecar off = mesh.sidecar("provider", "off", app, null);
        assertThat(off.identity()).isNull();
        assertThat(mesh.admin(off, "/config")).contains("\"mtls\" : \"off\"", "\"meshLinkEncrypted\" : false");
        WorkloadCertificate cert = mesh.certificate("consumer");
        try (TlsPeer peer = new TlsPeer(MeshFixture.port(off, "inbound"), cert.key(), cert.chain(),
                cert.trustBundle(), "weft-wmp/1")) {
            peer.send(get(1, "/echo"));
            assertThat(peer.status(1)).isZero();
        } catch (javax.net.ssl.SSLException e) {
            // refused within the handshake: the ClientHello was closed unanswered
        }
        assertThat(mesh.metric(off, "weft_tls_refused_total{side=\"server\",reason=\"no_local_certificate\"}"))
                .isEqualTo(1);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> SidecarConfig.builder("consumer", app.address())
                        .registry(mesh.registryUrl()).tokenFile(mesh.tokenFile("consumer")).mtls("strict")
                        .meshProtocol("http1").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--mtls strict needs --mesh-protocol wmp");
    }

    private boolean refused(int port, KeyPair keys, X509Certificate leaf, List<X509Certificate> roots, String alpn)
            throws Exception {
        try (TlsPeer peer = new TlsPeer(port, keys.getPrivate(), List.of(leaf), roots, alpn)) {
            peer.send(get(1, "/echo"));
            return peer.status(1) == 0;
        } catch (java.io.IOException e) {
            return true; // refused within the client's handshake, or closed before the request could be written
        }
    }

    /** What a plaintext client gets for {@code bytes}: nothing, when the port is strict. */
    private static byte[] plaintextAnswer(int port, byte[] bytes) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            s.getOutputStream().write(bytes);
            InputStream in = s.getInputStream();
            return in.readAllBytes();
        }
    }

    private static WmpRequest get(int stream, String path, String... fields) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < fields.length; i += 2) {
            h.add(fields[i], fields[i + 1]);
        }
        return new WmpRequest(stream, true, "GET", "provider", path, h, Unpooled.EMPTY_BUFFER);
    }

    private String run(String stdin, String... command) throws Exception {
        Process p = new ProcessBuilder(new ArrayList<>(List.of(command))).directory(dir.toFile())
                .redirectErrorStream(true).start();
        p.getOutputStream().close(); // s_client ends at end of input
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
