package dev.weft.registry.weft;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ControlPlaneUrlTest {
    private static final String PIN = "sha256:" + "0f".repeat(32);

    @TempDir
    Path dir;

    @Test
    void aWeftUrlIsPlainHttpOnPort7700ByDefault() {
        ControlPlaneUrl url = ControlPlaneUrl.parse("weft://control.example");
        assertThat(url.tls()).isFalse();
        assertThat(url.httpBase()).isEqualTo("http://control.example:7700");
        assertThat(url.toString()).isEqualTo("weft://control.example:7700");
    }

    @Test
    void aWeftTlsUrlIsHttpsAndCarriesItsPin() {
        ControlPlaneUrl url = ControlPlaneUrl.parse("weft+tls://10.0.0.5:7701?ca-pin=" + PIN.toUpperCase().replace(
                "SHA256:", "sha256:"));
        assertThat(url.tls()).isTrue();
        assertThat(url.httpBase()).isEqualTo("https://10.0.0.5:7701");
        assertThat(url.trust().pin()).isEqualTo(PIN);
        assertThat(url.toString()).isEqualTo("weft+tls://10.0.0.5:7701");
    }

    @Test
    void theFlagsBecomeOptionsOfATlsUrlOnly() {
        assertThat(ControlPlaneUrl.withTrust("weft+tls://h:1", null, PIN)).isEqualTo("weft+tls://h:1?ca-pin=" + PIN
                .replace(":", "%3A"));
        assertThat(ControlPlaneUrl.parse(ControlPlaneUrl.withTrust("weft+tls://h:1", null, PIN)).trust().pin())
                .isEqualTo(PIN);
        assertThat(ControlPlaneUrl.withTrust("etcd://h:2379", null, null)).isEqualTo("etcd://h:2379");
        assertThatThrownBy(() -> ControlPlaneUrl.withTrust("weft://h:1", null, PIN))
                .hasMessageContaining("its URL is weft+tls://HOST:PORT").hasMessageContaining("plain HTTP");
        assertThatThrownBy(() -> ControlPlaneUrl.parse("weft://h:1?ca-pin=" + PIN))
                .hasMessageContaining("its URL is weft+tls://HOST:PORT");
    }

    @Test
    void everyClientOfOneUrlSharesOneTrustSoABundleOneAdoptsReachesTheOthers() {
        // The registry client, the certificate client and the span exporter each parse the sidecar's URL; the
        // bundle the registry client adopts after a root rotation must be trusted by the exporter's posts too.
        ControlPlaneUrl registry = ControlPlaneUrl.parse("weft+tls://h:1?ca-pin=" + PIN);
        ControlPlaneUrl exporter = ControlPlaneUrl.parse("weft+tls://h:1?ca-pin=" + PIN.toUpperCase().replace(
                "SHA256:", "sha256:"));
        assertThat(exporter.trust()).isSameAs(registry.trust());
        assertThat(ControlPlaneUrl.parse("weft+tls://h:1?ca-pin=sha256:" + "1e".repeat(32)).trust())
                .isNotSameAs(registry.trust());
    }

    @Test
    void aBadPinOrCaFileIsSaidWithWhatWasExpected() throws Exception {
        assertThatThrownBy(() -> ControlPlaneUrl.withTrust("weft+tls://h:1", null, "md5:abc"))
                .hasMessageContaining("--control-ca-pin").hasMessageContaining("expected sha256:");
        assertThatThrownBy(() -> ControlPlaneUrl.withTrust("weft+tls://h:1", null, "sha256:abc"))
                .hasMessageContaining("64 hex digits");
        assertThatThrownBy(() -> ControlPlaneUrl.withTrust("weft+tls://h:1", dir.resolve("none.pem"), null))
                .hasMessageContaining("--control-ca " + dir.resolve("none.pem") + " cannot be read");
        Path empty = Files.writeString(dir.resolve("empty.pem"), "not a certificate\n");
        assertThatThrownBy(() -> ControlPlaneUrl.withTrust("weft+tls://h:1", empty, null))
                .hasMessageContaining("holds no certificate");
        assertThatThrownBy(() -> ControlPlaneUrl.parse("weft+tls://h:1?pin=" + PIN))
                .hasMessageContaining("unknown option 'pin'").hasMessageContaining("ca-pin=sha256:HEX");
        assertThatThrownBy(() -> ControlPlaneUrl.parse("http://h:1"))
                .hasMessageContaining("expected weft://HOST:PORT, or weft+tls://HOST:PORT");
    }
}
