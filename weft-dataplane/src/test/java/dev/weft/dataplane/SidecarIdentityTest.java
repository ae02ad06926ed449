package dev.weft.dataplane;

import dev.weft.control.ControlPlane;
import dev.weft.control.ca.CertificateAuthority;
import dev.weft.control.ca.Pem;
import dev.weft.dataplane.security.IdentityException;
import dev.weft.dataplane.security.WorkloadCertificate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A sidecar's workload identity against a real control plane and CA on loopback: the certificate before serving in
 * strict mode, what /config shows (and never shows), renewal at two thirds of the lifetime, and the reasons it gives
 * when it has no certificate.
 */
class SidecarIdentityTest {
    @TempDir
    Path dir;
    private final List<AutoCloseable> started = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private CertificateAuthority ca;
    private int controlPort;

    @AfterEach
    void stopEverything() throws Exception {
        for (AutoCloseable c : started.reversed()) {
            c.close();
        }
        http.close();
    }

    @Test
    void aStrictSidecarHasItsCertificateBeforeItServesAndConfigShowsWhoItIsButNoSecret() throws Exception {
        startControlPlane(Duration.ofHours(1), 0);
        String token = token("provider", false);
        Sidecar sidecar = sidecar("provider", tokenFile(token), "strict");

        WorkloadCertificate cert = sidecar.identity().current();
        assertThat(cert).isNotNull();
        assertThat(cert.spiffeId()).isEqualTo("spiffe://weft.local/service/provider");
        await().atMost(Duration.ofSeconds(10)).until(sidecar::isReady);

        String config = admin(sidecar, "/config");
        assertThat(config).contains("\"mtls\" : \"strict\"", "\"spiffeId\" : \"spiffe://weft.local/service/provider\"",
                "\"serial\" : \"" + cert.serial() + "\"", "\"notAfter\" : \"" + cert.notAfter() + "\"");
        assertThat(config).doesNotContain(token).doesNotContain("PRIVATE").doesNotContain("BEGIN");
        assertThat(admin(sidecar, "/metrics"))
                .contains("weft_identity_certificate_valid{spiffe_id=\"spiffe://weft.local/service/provider\"} 1")
                .doesNotContain(token);

        // The chain the sidecar holds verifies with openssl against the trust bundle it was given.
        Files.writeString(dir.resolve("leaf.pem"), Pem.write(cert.certificate()));
        Files.writeString(dir.resolve("bundle.pem"), Pem.certificates(cert.trustBundle()));
        assertThat(openssl("verify", "-CAfile", "bundle.pem", "leaf.pem")).contains("leaf.pem: OK");
        assertThat(openssl("x509", "-in", "leaf.pem", "-noout", "-ext", "subjectAltName"))
                .contains("URI:spiffe://weft.local/service/provider");
    }

    @Test
    void theCertificateIsRenewedWhenAThirdOfItsLifetimeIsLeftWithoutTheToken() throws Exception {
        startControlPlane(Duration.ofSeconds(15), 0);
        Path tokenFile = tokenFile(token("provider", true));
        Sidecar sidecar = sidecar("provider", tokenFile, "strict");
        WorkloadCertificate first = sidecar.identity().current();
        // The token was single-use and is gone: only the certificate can pay for the renewal.
        Files.delete(tokenFile);

        await().atMost(Duration.ofSeconds(25)).pollInterval(Duration.ofMillis(100))
                .until(() -> !sidecar.identity().current().serial().equals(first.serial()));
        WorkloadCertificate second = sidecar.identity().current();
        assertThat(second.receivedAt()).isAfter(first.renewAt().minusSeconds(1)).isBefore(first.notAfter());
        assertThat(second.spiffeId()).isEqualTo(first.spiffeId());
        assertThat(second.key()).isNotEqualTo(first.key());
        // The sidecar counts a certificate just after it takes it into use (SidecarIdentity.accept): wait for the count.
        await().atMost(Duration.ofSeconds(15)).until(() -> admin(sidecar, "/metrics")
                .contains("weft_identity_certificate_requests_total{result=\"ok\"} 2"));
        assertThat(admin(sidecar, "/metrics"))
                .contains("weft_identity_certificate_requests_total{result=\"ok\"} 2")
                .contains("weft_identity_certificate_requests_total{result=\"failed\"} 0");
    }

    @Test
    void withoutAValidTokenAStrictSidecarOpensNoPortAndSaysWhy() throws Exception {
        startControlPlane(Duration.ofHours(1), 0);
        Sidecar other = new Sidecar(config("provider", tokenFile(token("billing", false)), "strict"));
        started.add(other);
        assertThatThrownBy(other::start).isInstanceOf(IdentityException.class)
                .hasMessageContaining("no certificate for service 'provider', so the sidecar does not serve")
                .hasMessageContaining("403 wrong-service").hasMessageContaining("is for service 'billing'");
        assertThat(other.boundAddresses()).isEmpty();

        Path once = tokenFile(token("provider", true));
        sidecar("provider", once, "strict");
        Sidecar second = new Sidecar(config("provider", once, "strict"));
        started.add(second);
        assertThatThrownBy(second::start).hasMessageContaining("was for one certificate and has been used");

        Sidecar empty = new Sidecar(config("provider", tokenFile(" \n"), "strict"));
        started.add(empty);
        assertThatThrownBy(empty::start).hasMessageContaining("is empty (expected a join token from ./weft token"
                + " create --service provider)");

        // The command turns the refusal into exit status 1 (its message goes to stderr, as the test above reads it).
        assertThat(new CommandLine(new SidecarCommand()).execute("--service", "provider", "--app", "127.0.0.1:1",
                "--registry", "weft://127.0.0.1:" + controlPort, "--mtls", "strict",
                "--token-file", tokenFile(token("billing", false)).toString())).isEqualTo(1);

        StringWriter err = new StringWriter();
        int exit = new CommandLine(new SidecarCommand()).setErr(new PrintWriter(err))
                .execute("--service", "provider", "--app", "127.0.0.1:1", "--mtls", "strict");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--mtls strict needs --token-file");
        StringWriter etcd = new StringWriter();
        assertThat(new CommandLine(new SidecarCommand()).setErr(new PrintWriter(etcd))
                .execute("--service", "provider", "--app", "127.0.0.1:1", "--token-file", "t",
                        "--registry", "etcd://127.0.0.1:2379")).isEqualTo(2);
        assertThat(etcd.toString()).contains("--token-file needs the control plane as --registry");
    }

    @Test
    void strictIsTheDefaultSoASidecarWithoutATokenDoesNotStartAndSaysWhyAndWhatElseThereIs() {
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new SidecarCommand()).setErr(new PrintWriter(err))
                .execute("--service", "provider", "--app", "127.0.0.1:1");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--mtls strict needs --token-file", "strict, the default,",
                "refuses plaintext on the inbound port", "--mtls permissive", "--mtls off");
        StringWriter help = new StringWriter();
        assertThat(new CommandLine(new SidecarCommand()).setOut(new PrintWriter(help)).execute("--help")).isZero();
        assertThat(help.toString().replaceAll("\\s+", " ")).contains("strict (the default:", "(default: strict)");
        StringWriter etcd = new StringWriter();
        assertThat(new CommandLine(new SidecarCommand()).setErr(new PrintWriter(etcd))
                .execute("--service", "provider", "--app", "127.0.0.1:1", "--registry", "etcd://127.0.0.1:2379"))
                .isEqualTo(2);
        assertThat(etcd.toString()).contains("strict, the default,", "--mtls permissive");
    }

    @Test
    void aStrictSidecarWhoseControlPlaneIsAwayGivesUpAfterTenSecondsSayingSo() throws Exception {
        startControlPlane(Duration.ofHours(1), 0);
        Path tokenFile = tokenFile(token("provider", false));
        // Nothing listens there, and nothing can until the test ends (the sidecar's own listeners bind port 0 meanwhile).
        dev.weft.testing.HeldPort awayPort = dev.weft.testing.LoopbackPorts.held();
        started.add(awayPort);
        int away = awayPort.port();
        TestApp app = new TestApp();
        started.add(app);
        Sidecar sidecar = new Sidecar(SidecarConfig.builder("provider", app.address())
                .inbound(new InetSocketAddress("127.0.0.1", 0)).admin(new InetSocketAddress("127.0.0.1", 0))
                .registry("weft://127.0.0.1:" + away).workers(1).tokenFile(tokenFile).mtls("strict").build());
        started.add(sidecar);
        long begin = System.nanoTime();
        assertThatThrownBy(sidecar::start).isInstanceOf(IdentityException.class)
                .hasMessageContaining("no certificate for service 'provider' after trying for 10 s")
                .hasMessageContaining("control plane weft://127.0.0.1:" + away + " unreachable");
        assertThat(Duration.ofNanos(System.nanoTime() - begin)).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(30));
        assertThat(sidecar.boundAddresses()).isEmpty();
    }

    @Test
    void renewalFailuresAreCountedAndRetriedUntilTheControlPlaneIsBack() throws Exception {
        // Held until the test ends: while the control plane is away, nothing else can be given its port (a listener
        // binding port 0, the sidecar's own reconnecting client), and it binds the port again all the same.
        dev.weft.testing.HeldPort held = dev.weft.testing.LoopbackPorts.held();
        started.add(held);
        ControlPlane control = startControlPlane(Duration.ofSeconds(10), held.port());
        Sidecar sidecar = sidecar("provider", tokenFile(token("provider", false)), "permissive");
        await().atMost(Duration.ofSeconds(10)).until(() -> sidecar.identity().current() != null);
        WorkloadCertificate first = sidecar.identity().current();

        control.close();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> admin(sidecar, "/metrics").contains("weft_identity_certificate_requests_total{result=\"ok\"} 1")
                        && !admin(sidecar, "/metrics").contains("weft_identity_certificate_requests_total{result=\"failed\"} 0"));
        // The sidecar notes the failure's reason just after it counts it (SidecarIdentity.attempt): wait for the reason.
        await().atMost(Duration.ofSeconds(15)).until(() -> admin(sidecar, "/config").contains("control plane "
                + "weft://127.0.0.1:" + controlPort + " unreachable"));
        assertThat(admin(sidecar, "/config")).contains("control plane " + "weft://127.0.0.1:" + controlPort
                + " unreachable");

        startControlPlane(Duration.ofSeconds(10), controlPort);   // the same CA files: the same root and tokens
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> !sidecar.identity().current().serial().equals(first.serial()));
        assertThat(sidecar.identity().current().isValidAt(java.time.Instant.now())).isTrue();
    }

    private ControlPlane startControlPlane(Duration certTtl, int port) throws Exception {
        ca = CertificateAuthority.open(dir.resolve("ca"), CertificateAuthority.Settings.defaults().withCertTtl(certTtl));
        ControlPlane control = new ControlPlane().authority(ca);
        started.add(control);
        controlPort = control.start(new InetSocketAddress("127.0.0.1", port), dir.resolve("data")).getPort();
        return control;
    }

    private String token(String service, boolean singleUse) {
        return ca.createToken(service, Duration.ofMinutes(5), singleUse).join().token();
    }

    private Path tokenFile(String token) throws Exception {
        return Files.writeString(Files.createTempFile(dir, "token", ".txt"), token);
    }

    private SidecarConfig config(String service, Path tokenFile, String mode) throws Exception {
        TestApp app = new TestApp();
        started.add(app);
        return SidecarConfig.builder(service, app.address()).inbound(new InetSocketAddress("127.0.0.1", 0))
                .admin(new InetSocketAddress("127.0.0.1", 0)).registry("weft://127.0.0.1:" + controlPort)
                .workers(1).tokenFile(tokenFile).mtls(mode).build();
    }

    private Sidecar sidecar(String service, Path tokenFile, String mode) throws Exception {
        Sidecar s = new Sidecar(config(service, tokenFile, mode));
        started.add(s);
        s.start();
        return s;
    }

    private String admin(Sidecar s, String path) throws Exception {
        int port = s.boundAddresses().get("admin").getPort();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private String openssl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
