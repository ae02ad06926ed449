package dev.weft.dataplane;

import dev.weft.control.cli.Http;
import dev.weft.dataplane.security.IdentityException;
import dev.weft.registry.tls.ControlTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Sidecars and a control plane serving its API over TLS ({@code --api-tls on}; docs/security.md): pinning its CA
 * ({@code --control-ca-pin}), strict sidecars get their certificates, register, watch each other and post spans over
 * TLS; with a wrong pin a strict sidecar does not start, and says which CA it met.
 */
class SidecarControlTlsTest {
    @TempDir
    Path dir;

    @Test
    void strictSidecarsPinningTheControlPlanesCaGetCertificatesRegisterAndFindEachOther() throws Exception {
        try (TlsMesh mesh = new TlsMesh(dir, Duration.ofHours(1), true)) {
            mesh.sidecar("provider", "strict", mesh.app(), null);
            Sidecar consumer = mesh.sidecar("consumer", "strict", mesh.app(), "provider");

            // The consumer found the provider through its watch, over TLS, and called it over the mesh's mTLS.
            HttpRequest caller = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + MeshFixture.port(consumer, "upstream provider") + "/caller")).timeout(Duration.ofSeconds(5))
                    .build();
            await().atMost(Duration.ofSeconds(10)).until(() -> mesh.http.send(caller,
                    HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
            assertThat(mesh.http.send(caller, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("consumer");

            // Their spans reached the control plane's collector too (--trace-endpoint auto: https, the same pin).
            HttpRequest services = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + mesh.controlPort
                    + "/api/v2/services")).timeout(Duration.ofSeconds(5)).build();
            try (HttpClient tls = Http.tlsClient(ControlTrust.of(null, mesh.ca.rootPin()))) {
                await().atMost(Duration.ofSeconds(15)).until(() -> tls.send(services,
                        HttpResponse.BodyHandlers.ofString()).body().contains("consumer"));
            }
        }
    }

    @Test
    void aStrictSidecarWithAWrongPinDoesNotStartAndNamesTheCaItMet() throws Exception {
        try (TlsMesh mesh = new TlsMesh(dir, Duration.ofHours(1), true)) {
            String wrong = "sha256:" + "cd".repeat(32);
            SidecarConfig cfg = SidecarConfig.builder("provider", mesh.app().address())
                    .inbound(new InetSocketAddress("127.0.0.1", 0)).admin(new InetSocketAddress("127.0.0.1", 0))
                    .registry("weft+tls://127.0.0.1:" + mesh.controlPort + "?ca-pin=" + wrong).workers(1)
                    .tokenFile(mesh.tokenFile("provider")).build();
            try (Sidecar sidecar = new Sidecar(cfg)) {
                assertThatThrownBy(sidecar::start).isInstanceOf(IdentityException.class)
                        .hasMessageContaining("the control plane's CA does not match --control-ca-pin " + wrong)
                        .hasMessageContaining("(got " + mesh.ca.rootPin() + ")");
            }
        }
    }
}
