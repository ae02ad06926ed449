package dev.weft.dataplane;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a sidecar proves its registration with (docs/security.md, "Credentials of the control plane's API"), seen from
 * the control plane's counters: a request signed with its certificate while it holds one, its join token with
 * {@code --mtls off}, and nothing without a token, which the control plane refuses: that sidecar never registers.
 */
class SidecarRegistrationCredentialsTest {
    @TempDir
    Path dir;

    private static long controlMetric(TlsMesh mesh, String nameAndLabels) throws Exception {
        String text = mesh.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mesh.controlPort
                + "/metrics")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(nameAndLabels) + " (\\d+)$").matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    @Test
    void aSidecarSignsWithItsCertificateUsesItsTokenWithoutOneAndIsRefusedWithNeither() throws Exception {
        try (TlsMesh mesh = new TlsMesh(dir, Duration.ofHours(1))) {
            mesh.sidecar("provider", "strict", mesh.app(), null);
            assertThat(controlMetric(mesh, "weft_control_authenticated_total{proof=\"certificate\"}"))
                    .as("the strict sidecar's lease and registration, signed").isGreaterThanOrEqualTo(2);
            assertThat(controlMetric(mesh, "weft_control_authenticated_total{proof=\"join-token\"}")).isZero();

            mesh.sidecar("consumer", "off", mesh.app(), "provider");
            assertThat(controlMetric(mesh, "weft_control_authenticated_total{proof=\"join-token\"}"))
                    .as("--mtls off: no certificate, the token proves the registration").isGreaterThanOrEqualTo(2);
            assertThat(controlMetric(mesh, "weft_control_refused_total{reason=\"no-credentials\"}")).isZero();

            SidecarConfig cfg = SidecarConfig.builder("billing", mesh.app().address())
                    .inbound(new InetSocketAddress("127.0.0.1", 0)).admin(new InetSocketAddress("127.0.0.1", 0))
                    .registry(mesh.registryUrl()).workers(1).mtls("permissive").build();
            try (Sidecar anonymous = new Sidecar(cfg)) {
                anonymous.start();
                await().atMost(Duration.ofSeconds(10)).until(() -> controlMetric(mesh,
                        "weft_control_refused_total{reason=\"no-credentials\"}") > 0);
                assertThat(anonymous.isReady()).as("never registered, so never ready").isFalse();
                // Its /ready says why: the control plane's refusal, as the registry last heard it.
                await().atMost(Duration.ofSeconds(10)).until(() -> mesh.admin(anonymous, "/ready")
                        .contains("401 PUT /v1/leases needs"));
                assertThat(mesh.admin(anonymous, "/ready")).contains("no Authorization header");
                String billing = mesh.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + mesh.controlPort + "/v1/services/billing")).build(), HttpResponse.BodyHandlers.ofString())
                        .body();
                assertThat(billing).contains("\"endpoints\":[]");
            }
        }
    }
}
