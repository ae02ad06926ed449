package dev.weft.control.ca;

import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/** The identity routes over real HTTP on loopback: what a token buys, what a CSR may be, how a renewal is proven. */
class IdentityApiTest {
    @TempDir
    Path dir;

    @Test
    void aTokenIsRefusedWhenExpiredUnknownUsedUpOrAnotherServicesAndEachRefusalIsCounted() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String reusable = f.token("provider", Duration.ofMinutes(5), false);
            String once = f.token("provider", Duration.ofMinutes(5), true);
            String shortLived = f.token("provider", Duration.ofSeconds(1), false);

            // Reusable: any number of the service's sidecars until it expires.
            assertThat(f.issue("provider", reusable, CaFixture.csrPem(CaFixture.p256())).status()).isEqualTo(200);
            assertThat(f.issue("provider", reusable, CaFixture.csrPem(CaFixture.p256())).status()).isEqualTo(200);

            CaFixture.Answer wrongService = f.issue("consumer", reusable, CaFixture.csrPem(CaFixture.p256()));
            assertThat(wrongService.status()).isEqualTo(403);
            assertThat(wrongService.body().get("code").asText()).isEqualTo("wrong-service");
            assertThat(wrongService.body().get("error").asText()).contains("is for service 'provider', not 'consumer'");

            assertThat(f.issue("provider", once, CaFixture.csrPem(CaFixture.p256())).status()).isEqualTo(200);
            CaFixture.Answer usedUp = f.issue("provider", once, CaFixture.csrPem(CaFixture.p256()));
            assertThat(usedUp.status()).isEqualTo(401);
            assertThat(usedUp.body().get("error").asText()).contains("was for one certificate and has been used");

            CaFixture.Answer unknown = f.issue("provider", JoinTokens.PREFIX + "A".repeat(43),
                    CaFixture.csrPem(CaFixture.p256()));
            assertThat(unknown.status()).isEqualTo(401);
            assertThat(unknown.body().get("code").asText()).isEqualTo("invalid-token");

            Thread.sleep(1100);
            CaFixture.Answer expired = f.issue("provider", shortLived, CaFixture.csrPem(CaFixture.p256()));
            assertThat(expired.status()).isEqualTo(401);
            assertThat(expired.body().get("error").asText()).contains("expired at")
                    .contains("./weft token create --service provider");

            String metrics = f.get("/metrics");
            assertThat(metrics).contains("weft_control_certificates_issued_total{proof=\"token\"} 3")
                    .contains("weft_control_certificate_refusals_total{reason=\"invalid-token\"} 3")
                    .contains("weft_control_certificate_refusals_total{reason=\"wrong-service\"} 1")
                    .contains("weft_control_join_tokens_created_total 3");
        }
    }

    @Test
    void aTokenOutlivesARestartOfTheControlPlaneAndIsKeptOnlyAsItsHash() throws Exception {
        String token;
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            token = f.token("provider", Duration.ofMinutes(5), true);
        }
        Path file = dir.resolve("data/ca/tokens.json");
        assertThat(java.nio.file.Files.readString(file)).contains(JoinTokens.sha256(token)).doesNotContain(token);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                java.nio.file.Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            assertThat(f.issue("provider", token, CaFixture.csrPem(CaFixture.p256())).status()).isEqualTo(200);
        }
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            // Its single use is remembered across the restart too.
            assertThat(f.issue("provider", token, CaFixture.csrPem(CaFixture.p256())).status()).isEqualTo(401);
        }
    }

    @Test
    void hostileCsrsAreAnswered400SayingWhatIsExpectedAndNeverFailTheServer() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String token = f.token("provider", Duration.ofMinutes(5), false);
            PKCS10CertificationRequest good = CaFixture.csr(CaFixture.p256(), "SHA256withECDSA");
            byte[] der = good.getEncoded();
            byte[] tampered = der.clone();
            tampered[tampered.length - 5] ^= 0x01;   // inside the signature
            byte[] trailing = java.util.Arrays.copyOf(der, der.length + 2);
            List<String> hostile = List.of(
                    "",
                    "not a csr",
                    Pem.write(good) + Pem.write(good),
                    "-----BEGIN CERTIFICATE REQUEST-----\n!!!!\n-----END CERTIFICATE REQUEST-----\n",
                    pem(new byte[]{0x30, (byte) 0x84, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff}),
                    pem(java.util.Arrays.copyOf(der, der.length / 2)),
                    pem(trailing),
                    pem(tampered),
                    pem(new byte[5000]),
                    "-----BEGIN CERTIFICATE REQUEST-----\n" + "A".repeat(9000) + "\n-----END CERTIFICATE REQUEST-----\n",
                    Pem.write(CaFixture.csr(CaFixture.keys("RSA", null, 1024), "SHA256withRSA")),
                    Pem.write(CaFixture.csr(CaFixture.keys("EC", new ECGenParameterSpec("secp521r1"), 0),
                            "SHA512withECDSA")),
                    Pem.write(CaFixture.csr(CaFixture.keys("Ed25519", null, 0), "Ed25519")),
                    Pem.write(CaFixture.csr(CaFixture.p256(), "SHA1withECDSA")));
            for (String csr : hostile) {
                CaFixture.Answer a = f.issue("provider", token, csr);
                assertThat(a.status()).as(csr).isEqualTo(400);
                assertThat(a.body().get("code").asText()).as(csr).isEqualTo("bad-csr");
                assertThat(a.body().get("error").asText()).as(csr).contains("expected one PEM CERTIFICATE REQUEST");
            }

            // Single-byte mutations anywhere in a good CSR: refused or (harmlessly) accepted, never a server failure.
            Random random = new Random(13);
            for (int i = 0; i < 150; i++) {
                byte[] mutated = der.clone();
                mutated[random.nextInt(mutated.length)] = (byte) random.nextInt(256);
                assertThat(f.issue("provider", token, pem(mutated)).status()).isIn(200, 400);
            }
            assertThat(f.issue("provider", token, Pem.write(good)).status()).isEqualTo(200);
            assertThat(f.get("/metrics")).contains("weft_control_certificate_refusals_total{reason=\"bad-csr\"} ");
        }
    }

    @Test
    void aRenewalIsProvenWithTheCurrentCertificatesKeyAndNeedsNoToken() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            KeyPair first = CaFixture.p256();
            CaFixture.Answer issued = f.issue("provider", f.token("provider", Duration.ofMinutes(5), true),
                    CaFixture.csrPem(first));
            String certificate = issued.body().get("certificate").asText();

            KeyPair next = CaFixture.p256();
            PKCS10CertificationRequest csr = CaFixture.csr(next, "SHA256withECDSA");
            CaFixture.Answer renewed = renew(f, "provider", certificate, sign(first, csr.getEncoded()), csr);
            assertThat(renewed.status()).as(renewed.text()).isEqualTo(200);
            assertThat(renewed.body().get("spiffeId").asText()).isEqualTo("spiffe://weft.local/service/provider");
            assertThat(renewed.body().get("serial").asText()).isNotEqualTo(issued.body().get("serial").asText());

            // Signed by a key other than the certificate's: whoever sent it does not hold the certificate.
            CaFixture.Answer stolen = renew(f, "provider", certificate, sign(next, csr.getEncoded()), csr);
            assertThat(stolen.status()).isEqualTo(401);
            assertThat(stolen.body().get("code").asText()).isEqualTo("invalid-certificate");

            CaFixture.Answer otherService = renew(f, "billing", certificate, sign(first, csr.getEncoded()), csr);
            assertThat(otherService.status()).isEqualTo(403);
            assertThat(otherService.body().get("error").asText()).contains("is for spiffe://weft.local/service/provider");

            try (CaFixture other = new CaFixture(dir.resolve("other"), CertificateAuthority.Settings.defaults())) {
                CaFixture.Answer foreign = renew(other, "provider", certificate, sign(first, csr.getEncoded()), csr);
                assertThat(foreign.status()).isEqualTo(401);
                assertThat(foreign.body().get("error").asText()).contains("was not issued by this CA");
            }
            assertThat(f.get("/metrics")).contains("weft_control_certificates_issued_total{proof=\"certificate\"} 1");

            CaFixture.Answer both = f.post("/v1/certificates", Map.of("service", "provider", "token", "x",
                    "certificate", certificate, "csr", Pem.write(csr)));
            assertThat(both.status()).isEqualTo(400);
            assertThat(both.body().get("error").asText()).contains("not both");
        }
    }

    @Test
    void joinTokensAreMadeOnlyForTheOperatorFromLoopbackOrNot() throws Exception {
        // Until operator credentials existed, tokens were made for loopback callers only; now the operator token
        // decides, wherever the caller is (docs/security.md).
        try (CaFixture f = new CaFixture(dir.resolve("local"), CertificateAuthority.Settings.defaults())) {
            CaFixture.Answer anonymous = f.post("/v1/tokens", Map.of("service", "provider"), null);
            assertThat(anonymous.status()).isEqualTo(401);
            assertThat(anonymous.body().get("code").asText()).isEqualTo("no-credentials");
            assertThat(anonymous.body().get("error").asText()).contains("needs the operator token");
            CaFixture.Answer wrong = f.post("/v1/tokens", Map.of("service", "provider"), "Bearer not-the-token");
            assertThat(wrong.status()).isEqualTo(401);
            assertThat(wrong.body().get("code").asText()).isEqualTo("invalid-token");
            CaFixture.Answer a = f.post("/v1/tokens", Map.of("service", "provider", "ttlMillis", 60_000));
            assertThat(a.status()).as(a.text()).isEqualTo(200);
            assertThat(a.body().get("token").asText()).startsWith(JoinTokens.PREFIX).hasSize(51);
            assertThat(a.body().get("id").asText()).hasSize(16);
            // A join token is a sidecar's credential: it may not make tokens.
            CaFixture.Answer bySidecar = f.post("/v1/tokens", Map.of("service", "provider"),
                    "Bearer " + a.body().get("token").asText());
            assertThat(bySidecar.status()).isEqualTo(403);
            assertThat(bySidecar.body().get("code").asText()).isEqualTo("operator-only");
            assertThat(f.get("/metrics")).contains("weft_control_refused_total{reason=\"no-credentials\"} 1")
                    .contains("weft_control_refused_total{reason=\"invalid-token\"} 1")
                    .contains("weft_control_refused_total{reason=\"operator-only\"} 1");
        }
        InetAddress outside = null;
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && nic.isUp()) {
                    outside = a;
                }
            }
        }
        assumeThat(outside).as("a non-loopback IPv4 address on this machine").isNotNull();
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults(), outside.getHostAddress())) {
            assertThat(f.post("/v1/tokens", Map.of("service", "provider"), null).status()).isEqualTo(401);
            CaFixture.Answer a = f.post("/v1/tokens", Map.of("service", "provider"));
            assertThat(a.status()).as(a.text()).isEqualTo(200);
            // Certificates are another matter: sidecars on other hosts need them, and pay with the token itself.
            CaFixture.Answer issued = f.issue("provider", a.body().get("token").asText(),
                    CaFixture.csrPem(CaFixture.p256()));
            assertThat(issued.status()).isEqualTo(200);
        }
    }

    @Test
    void aRootRotationServesBothRootsThenRenewsOldRootCertificatesIntoTheNewOneThenDropsTheOld() throws Exception {
        Path oldRoot = dir.resolve("data/ca/root.pem");
        Path next = dir.resolve("next");
        CertificateAuthority.open(next, CertificateAuthority.Settings.defaults()).close(); // the new root, made ahead
        KeyPair first = CaFixture.p256();
        String certificate;
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            certificate = f.issue("provider", f.token("provider", Duration.ofMinutes(5), false),
                    CaFixture.csrPem(first)).body().get("certificate").asText();
        }
        // 1. Still signing with the old root, the bundle gains the new one: every renewal now brings both.
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults()
                .withOverlapRoots(next.resolve("root.pem")))) {
            assertThat(Pem.readCertificates(f.ca.trustBundlePem(), "bundle")).hasSize(2);
            assertThat(f.ca.describe()).contains("root rotation: also trusting 1 overlap root(s)");
        }
        // 2. Signing with the new root, trusting the old: a certificate of the old root renews without a token.
        KeyPair second = CaFixture.p256();
        PKCS10CertificationRequest csr = CaFixture.csr(second, "SHA256withECDSA");
        CertificateAuthority.Settings rotated = CertificateAuthority.Settings.defaults()
                .withCa(next.resolve("root.pem"), next.resolve("root.key"));
        try (CaFixture f = new CaFixture(dir, rotated.withOverlapRoots(oldRoot))) {
            CaFixture.Answer renewed = renew(f, "provider", certificate, sign(first, csr.getEncoded()), csr);
            assertThat(renewed.status()).as(renewed.text()).isEqualTo(200);
            f.write("leaf.pem", renewed.body().get("certificate").asText());
            f.write("new-root.pem", Files.readString(next.resolve("root.pem")));
            assertThat(f.openssl("verify", "-CAfile", "new-root.pem", "leaf.pem")).contains("leaf.pem: OK");
            assertThat(Pem.readCertificates(renewed.body().get("trustBundle").asText(), "bundle")).hasSize(2);
        }
        // 3. The overlap is over: the old root is neither trusted nor accepted for a renewal.
        try (CaFixture f = new CaFixture(dir, rotated)) {
            assertThat(Pem.readCertificates(f.ca.trustBundlePem(), "bundle")).hasSize(1);
            CaFixture.Answer refused = renew(f, "provider", certificate, sign(first, csr.getEncoded()), csr);
            assertThat(refused.status()).isEqualTo(401);
            assertThat(refused.text()).contains("was not issued by this CA");
        }
        Path leaf = Files.writeString(dir.resolve("not-a-root.pem"), certificate);
        assertThatThrownBy(() -> CertificateAuthority.open(dir.resolve("data/ca"),
                CertificateAuthority.Settings.defaults().withOverlapRoots(leaf)))
                .hasMessageContaining("--ca-overlap-roots " + leaf).hasMessageContaining("is not a self-signed root");
    }

    private static CaFixture.Answer renew(CaFixture f, String service, String certificate, String proof,
                                          PKCS10CertificationRequest csr) throws Exception {
        return f.post("/v1/certificates", Map.of("service", service, "certificate", certificate, "proof", proof,
                "csr", Pem.write(csr)));
    }

    private static String sign(KeyPair keys, byte[] data) throws Exception {
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(keys.getPrivate());
        s.update(data);
        return Base64.getEncoder().encodeToString(s.sign());
    }

    private static String pem(byte[] der) {
        return "-----BEGIN CERTIFICATE REQUEST-----\n" + Base64.getMimeEncoder().encodeToString(der)
                + "\n-----END CERTIFICATE REQUEST-----\n";
    }
}
