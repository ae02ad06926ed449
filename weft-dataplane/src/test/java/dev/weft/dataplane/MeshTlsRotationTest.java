package dev.weft.dataplane;

import dev.weft.control.ca.CertificateAuthority;
import dev.weft.control.ca.Pem;
import dev.weft.dataplane.security.SidecarIdentity;
import dev.weft.dataplane.security.WorkloadCertificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Certificate renewal and root rotation under load on a strict mesh: short certificates (the CA's minimum is 10 s),
 * renewed at two thirds of their lifetime, while a steady load runs through the consumer's sidecar to the provider's.
 * Not timing tests: they count failed requests (none allowed) and what new connections see.
 */
class MeshTlsRotationTest {
    /**
     * The renewal test's certificates: 12 s (as the root rotation's), renewed at about 8 s. How long they live changes
     * nothing of what is checked (that renewals under load fail no request and reach new connections), only how long
     * three renewals take; 12 s leaves 4 s for a renewal on a busy machine.
     */
    private static final Duration LIFETIME = Duration.ofSeconds(12);
    /** The load runs until three renewals have been seen on each side (about 25 s), or fails after this. */
    private static final Duration LOAD_AT_MOST = Duration.ofSeconds(90);
    @TempDir
    Path dir;

    /** Steady load through the consumer's sidecar on 4 virtual threads until stopped; counts what did not work. */
    private static final class Load implements AutoCloseable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong ok = new AtomicLong();
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        private final List<Thread> threads = new ArrayList<>();

        Load(TlsMesh mesh, HttpRequest get) {
            for (int i = 0; i < 4; i++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    while (!stop.get()) {
                        try {
                            HttpResponse<Void> r = mesh.http.send(get, HttpResponse.BodyHandlers.discarding());
                            if (r.statusCode() == 200) {
                                ok.incrementAndGet();
                            } else {
                                failures.add(r.statusCode() + " " + r.headers().firstValue("x-weft-error").orElse(""));
                            }
                        } catch (Exception e) {
                            failures.add(e.toString());
                        }
                    }
                }));
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join(Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void aRootRotationUnderLoadFailsNoRequestAndEndsWithEveryCertificateUnderTheNewRoot() throws Exception {
        try (TlsMesh mesh = new TlsMesh(dir, Duration.ofSeconds(12))) {
            Sidecar provider = mesh.sidecar("provider", "strict", mesh.app(), null);
            Sidecar consumer = mesh.sidecar("consumer", "strict", mesh.app(), "provider");
            SidecarIdentity probe = mesh.identity("consumer");   // opens new connections as the rotation goes on
            URI echo = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/echo");
            HttpRequest get = HttpRequest.newBuilder(echo).timeout(Duration.ofSeconds(5)).build();
            await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(get,
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
            Path oldRoot = dir.resolve("ca").resolve("root.pem");
            Path next = dir.resolve("next");
            CertificateAuthority.open(next, CertificateAuthority.Settings.defaults()).close();
            CertificateAuthority.Settings base = CertificateAuthority.Settings.defaults().withCertTtl(Duration.ofSeconds(12));
            CertificateAuthority.Settings signingWithNew = base.withCa(next.resolve("root.pem"), next.resolve("root.key"));
            List<SidecarIdentity> all = List.of(provider.identity(), consumer.identity(), probe);

            X509Certificate newRoot = Pem.readCertificates(Files.readString(next.resolve("root.pem")), "root").getFirst();
            Load load = new Load(mesh, get);
            try {
                // 1. Both roots trusted, the old one signing: each sidecar gets both at its next renewal.
                mesh.restartControlPlane(base.withOverlapRoots(next.resolve("root.pem")));
                awaitAll(all, c -> c.trustBundle().size() == 2, provider);
                // 2. The new root signing, the old still trusted: certificates move under the new root.
                mesh.restartControlPlane(signingWithNew.withOverlapRoots(oldRoot));
                awaitAll(all, c -> signedBy(c.certificate(), newRoot), provider);
                // 3. The overlap ends: only the new root is trusted.
                mesh.restartControlPlane(signingWithNew);
                awaitAll(all, c -> c.trustBundle().equals(List.of(newRoot)), provider);
            } finally {
                load.close();
            }
            System.out.printf("root rotation under load: %d requests ok, %d failed%n", load.ok.get(),
                    load.failures.size());
            assertThat(load.failures).as("failed requests during the root rotation").isEmpty();
            assertThat(load.ok.get()).isGreaterThan(100);
            assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"failed\"}")).isZero();
        }
    }

    private static boolean signedBy(X509Certificate cert, X509Certificate root) {
        try {
            cert.verify(root.getPublicKey());
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    /** Waits until every identity's certificate satisfies {@code done}, opening a new connection each 500 ms. */
    private static void awaitAll(List<SidecarIdentity> identities, Predicate<WorkloadCertificate> done,
                                 Sidecar provider) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            WorkloadCertificate client = identities.get(2).current();
            try (TlsPeer peer = new TlsPeer(MeshFixture.port(provider, "inbound"), client.key(), client.chain(),
                    client.trustBundle(), "weft-wmp/1")) {
                peer.send(new dev.weft.protocol.WmpRequest(1, true, "GET", "provider", "/echo",
                        new dev.weft.protocol.WmpHeaders(), io.netty.buffer.Unpooled.EMPTY_BUFFER));
                assertThat(peer.status(1)).as("a new connection during the rotation").isEqualTo(200);
            }
            return identities.stream().allMatch(i -> done.test(i.current()));
        });
    }

    @Test
    void certificatesRenewedUnderASteadyLoadFailNoRequestAndNewConnectionsPresentTheNewCertificate() throws Exception {
        try (TlsMesh mesh = new TlsMesh(dir, LIFETIME)) {
            Sidecar provider = mesh.sidecar("provider", "strict", mesh.app(), null);
            Sidecar consumer = mesh.sidecar("consumer", "strict", mesh.app(), "provider");
            URI echo = URI.create("http://127.0.0.1:" + MeshFixture.port(consumer, "upstream provider") + "/echo");
            HttpRequest get = HttpRequest.newBuilder(echo).timeout(Duration.ofSeconds(5)).build();
            await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(get,
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
            String firstProviderSerial = provider.identity().current().serial();
            String firstConsumerSerial = consumer.identity().current().serial();

            Load load = new Load(mesh, get);
            // Every second a new connection to the provider's inbound port: it must present the certificate in force.
            // Until each side has renewed at least three times (the first serial and three more seen, four issued).
            Set<String> seenByNewConnections = new LinkedHashSet<>();
            SidecarIdentity probe = mesh.identity("consumer");   // renewed too, like a sidecar's
            long end = System.nanoTime() + LOAD_AT_MOST.toNanos();
            while (System.nanoTime() < end && !(seenByNewConnections.size() >= 4
                    && mesh.metric(provider, "weft_identity_certificate_requests_total{result=\"ok\"}") >= 4
                    && mesh.metric(consumer, "weft_identity_certificate_requests_total{result=\"ok\"}") >= 4)) {
                String current = provider.identity().current().serial();
                WorkloadCertificate client = probe.current();
                try (TlsPeer peer = new TlsPeer(MeshFixture.port(provider, "inbound"), client.key(), client.chain(),
                        client.trustBundle(), "weft-wmp/1")) {
                    String presented = peer.serverLeaf().getSerialNumber().toString(16);
                    String after = provider.identity().current().serial();
                    assertThat(presented).as("a new connection presents the certificate in force").isIn(current, after);
                    seenByNewConnections.add(presented);
                }
                Thread.sleep(1_000);
            }
            load.close();

            System.out.printf("rotation under load: %d requests ok, %d failed; provider serials on new connections: %s%n",
                    load.ok.get(), load.failures.size(), seenByNewConnections);
            assertThat(load.failures).as("failed requests during renewals").isEmpty();
            assertThat(load.ok.get()).isGreaterThan(100);
            // 12 s certificates renewed at ~8 s: at least 3 renewals on each side, all without a failure.
            assertThat(seenByNewConnections).hasSizeGreaterThanOrEqualTo(4).contains(firstProviderSerial);
            assertThat(mesh.metric(provider, "weft_identity_certificate_requests_total{result=\"ok\"}"))
                    .isGreaterThanOrEqualTo(4);
            assertThat(consumer.identity().current().serial()).isNotEqualTo(firstConsumerSerial);
            assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"failed\"}")).isZero();
            assertThat(mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"failed\"}")).isZero();
        }
    }
}
