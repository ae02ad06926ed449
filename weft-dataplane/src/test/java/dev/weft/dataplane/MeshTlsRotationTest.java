package dev.weft.dataplane;

import dev.weft.dataplane.security.SidecarIdentity;
import dev.weft.dataplane.security.WorkloadCertificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Certificate renewal under load on a strict mesh: 20-second certificates (the CA's minimum is 10 s), renewed at two
 * thirds of their lifetime, while a steady load runs for a minute through the consumer's sidecar to the provider's.
 * Not a timing test: it counts failed requests (none allowed) and the serials that new connections see.
 */
class MeshTlsRotationTest {
    private static final Duration LIFETIME = Duration.ofSeconds(20);
    private static final Duration LOAD = Duration.ofSeconds(60);
    @TempDir
    Path dir;

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

            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong ok = new AtomicLong();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            List<Thread> load = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                load.add(Thread.ofVirtual().start(() -> {
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

            // Every 2 s a new connection to the provider's inbound port: it must present the certificate in force.
            Set<String> seenByNewConnections = new LinkedHashSet<>();
            SidecarIdentity probe = mesh.identity("consumer");   // renewed too, like a sidecar's
            long end = System.nanoTime() + LOAD.toNanos();
            while (System.nanoTime() < end) {
                String current = provider.identity().current().serial();
                WorkloadCertificate client = probe.current();
                try (TlsPeer peer = new TlsPeer(MeshFixture.port(provider, "inbound"), client.key(), client.chain(),
                        client.trustBundle(), "weft-wmp/1")) {
                    String presented = peer.serverLeaf().getSerialNumber().toString(16);
                    String after = provider.identity().current().serial();
                    assertThat(presented).as("a new connection presents the certificate in force").isIn(current, after);
                    seenByNewConnections.add(presented);
                }
                Thread.sleep(2_000);
            }
            stop.set(true);
            for (Thread t : load) {
                t.join(Duration.ofSeconds(10));
            }

            System.out.printf("rotation under load: %d requests ok, %d failed; provider serials on new connections: %s%n",
                    ok.get(), failures.size(), seenByNewConnections);
            assertThat(failures).as("failed requests during renewals").isEmpty();
            assertThat(ok.get()).isGreaterThan(100);
            // 60 s of 20 s certificates renewed at ~13 s: at least 3 renewals on each side, all without a failure.
            assertThat(seenByNewConnections).hasSizeGreaterThanOrEqualTo(4).contains(firstProviderSerial);
            assertThat(mesh.metric(provider, "weft_identity_certificate_requests_total{result=\"ok\"}"))
                    .isGreaterThanOrEqualTo(4);
            assertThat(consumer.identity().current().serial()).isNotEqualTo(firstConsumerSerial);
            assertThat(mesh.metric(provider, "weft_tls_handshakes_total{side=\"server\",result=\"failed\"}")).isZero();
            assertThat(mesh.metric(consumer, "weft_tls_handshakes_total{side=\"client\",result=\"failed\"}")).isZero();
        }
    }
}
