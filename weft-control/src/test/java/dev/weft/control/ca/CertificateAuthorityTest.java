package dev.weft.control.ca;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The CA's root and the certificates it issues, checked with the openssl binary rather than with our own reading. */
class CertificateAuthorityTest {
    @TempDir
    Path dir;

    @Test
    void theRootIsMadeAtFirstStartWithMode0600AndTheSameRootComesBackAfterARestart() throws Exception {
        String bundle;
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            bundle = f.ca.trustBundlePem();
            assertThat(f.get("/v1/trust-bundle")).contains("BEGIN CERTIFICATE").doesNotContain("PRIVATE KEY");
        }
        Path ca = dir.resolve("data/ca");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ca.resolve("root.key"))))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ca))).isEqualTo("rwx------");
        assertThat(Files.readString(ca.resolve("root.key"))).contains("PRIVATE KEY");

        try (CaFixture again = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            assertThat(again.ca.trustBundlePem()).isEqualTo(bundle);
        }

        Files.setPosixFilePermissions(ca.resolve("root.key"), PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> CertificateAuthority.open(ca, CertificateAuthority.Settings.defaults()))
                .isInstanceOf(IOException.class).hasMessageContaining("expected rw-------");
    }

    @Test
    void anIssuedChainVerifiesWithOpensslAndNamesOnlyTheServicesSpiffeId() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults().withCertTtl(Duration.ofHours(2)))) {
            CaFixture.Answer a = f.issue("provider", f.token("provider", Duration.ofMinutes(5), false),
                    CaFixture.csrPem(CaFixture.p256()));

            assertThat(a.status()).as(a.text()).isEqualTo(200);
            assertThat(a.text()).doesNotContain("PRIVATE KEY");
            assertThat(a.body().get("spiffeId").asText()).isEqualTo("spiffe://weft.local/service/provider");
            Instant notAfter = Instant.parse(a.body().get("notAfter").asText());
            assertThat(Duration.between(Instant.now(), notAfter)).isBetween(Duration.ofMinutes(119), Duration.ofHours(2));
            f.write("leaf.pem", a.body().get("certificate").asText());
            f.write("chain.pem", a.body().get("chain").asText());
            f.write("bundle.pem", a.body().get("trustBundle").asText());

            assertThat(f.openssl("verify", "-CAfile", "bundle.pem", "-untrusted", "chain.pem", "leaf.pem"))
                    .contains("leaf.pem: OK");
            String text = f.openssl("x509", "-in", "leaf.pem", "-noout", "-serial", "-ext",
                    "subjectAltName,extendedKeyUsage,basicConstraints,keyUsage");
            assertThat(text).contains("URI:spiffe://weft.local/service/provider")
                    .contains("TLS Web Server Authentication, TLS Web Client Authentication")
                    .contains("CA:FALSE").contains("Digital Signature")
                    // The CSR asked for these; the CA takes no name from a CSR.
                    .doesNotContain("evil.example").doesNotContain("service/admin");
            // openssl prints the serial's bytes, so an odd number of hex digits gets a leading 0 that the API's
            // number does not have: compare the numbers.
            String serial = text.lines().filter(l -> l.startsWith("serial=")).findFirst().orElseThrow().substring(7);
            assertThat(new java.math.BigInteger(serial.strip(), 16))
                    .isEqualTo(new java.math.BigInteger(a.body().get("serial").asText(), 16));
            assertThat(f.openssl("x509", "-in", "leaf.pem", "-noout", "-subject")).doesNotContain("admin");
        }
    }

    @Test
    void anOperatorsIntermediateSignsAndTheChainLeadsToItsRoot() throws Exception {
        KeyPair rootKeys = CaFixture.p256();
        KeyPair intermediateKeys = CaFixture.p256();
        X509Certificate root = caCertificate("CN=Operator Root", rootKeys, "CN=Operator Root", rootKeys);
        X509Certificate intermediate = caCertificate("CN=Operator Root", rootKeys, "CN=Mesh Intermediate",
                intermediateKeys);
        Path certFile = Files.writeString(dir.resolve("ca.pem"), Pem.write(intermediate, root));
        Path keyFile = Files.writeString(dir.resolve("ca.key"), Pem.privateKey(intermediateKeys.getPrivate()));
        Files.writeString(dir.resolve("root.pem"), Pem.write(root));

        try (CaFixture f = new CaFixture(dir, new CertificateAuthority.Settings("prod.example", Duration.ofHours(1),
                certFile, keyFile))) {
            CaFixture.Answer a = f.issue("billing", f.token("billing", Duration.ofMinutes(5), false),
                    CaFixture.csrPem(CaFixture.p256()));
            assertThat(a.status()).as(a.text()).isEqualTo(200);
            assertThat(a.body().get("trustBundle").asText()).isEqualTo(Pem.write(root));
            f.write("leaf.pem", a.body().get("certificate").asText());
            f.write("chain.pem", a.body().get("chain").asText());
            assertThat(Pem.readCertificates(a.body().get("chain").asText(), "chain")).hasSize(2);

            assertThat(f.openssl("verify", "-CAfile", "root.pem", "-untrusted", "chain.pem", "leaf.pem"))
                    .contains("leaf.pem: OK");
            assertThat(f.openssl("x509", "-in", "leaf.pem", "-noout", "-ext", "subjectAltName"))
                    .contains("URI:spiffe://prod.example/service/billing");
            // No root of our own was made beside the operator's.
            assertThat(dir.resolve("data/ca/root.key")).doesNotExist();
        }

        Path otherKey = Files.writeString(dir.resolve("other.key"), Pem.privateKey(CaFixture.p256().getPrivate()));
        assertThatThrownBy(() -> CertificateAuthority.open(dir.resolve("ca2"), new CertificateAuthority.Settings(
                "prod.example", Duration.ofHours(1), certFile, otherKey)))
                .hasMessageContaining("does not belong to the first certificate");
        Path intermediateOnly = Files.writeString(dir.resolve("alone.pem"), Pem.write(intermediate));
        assertThatThrownBy(() -> CertificateAuthority.open(dir.resolve("ca3"), new CertificateAuthority.Settings(
                "prod.example", Duration.ofHours(1), intermediateOnly, keyFile)))
                .hasMessageContaining("up to and including the root");
    }

    @Test
    void anIntermediateMadeByOpensslWithItsOwnKeyFormatIsAccepted() throws Exception {
        Files.writeString(dir.resolve("ca.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
        CaFixture.openssl(dir, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "root.key");
        CaFixture.openssl(dir, "req", "-x509", "-new", "-key", "root.key", "-subj", "/CN=Openssl Root", "-days", "30",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-out", "root.pem");
        CaFixture.openssl(dir, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "int.key");
        CaFixture.openssl(dir, "req", "-new", "-key", "int.key", "-subj", "/CN=Openssl Intermediate", "-out", "int.csr");
        CaFixture.openssl(dir, "x509", "-req", "-in", "int.csr", "-CA", "root.pem", "-CAkey", "root.key",
                "-CAcreateserial", "-days", "30", "-extfile", "ca.ext", "-out", "int.pem");
        assertThat(Files.readString(dir.resolve("int.key"))).contains("BEGIN EC PRIVATE KEY");
        Path chain = Files.writeString(dir.resolve("ca-chain.pem"),
                Files.readString(dir.resolve("int.pem")) + Files.readString(dir.resolve("root.pem")));

        try (CaFixture f = new CaFixture(dir, new CertificateAuthority.Settings("weft.local", Duration.ofHours(1),
                chain, dir.resolve("int.key")))) {
            CaFixture.Answer a = f.issue("provider", f.token("provider", Duration.ofMinutes(5), false),
                    CaFixture.csrPem(CaFixture.p256()));
            assertThat(a.status()).as(a.text()).isEqualTo(200);
            f.write("leaf.pem", a.body().get("certificate").asText());
            f.write("chain.pem", a.body().get("chain").asText());
            assertThat(f.openssl("verify", "-CAfile", "root.pem", "-untrusted", "chain.pem", "leaf.pem"))
                    .contains("leaf.pem: OK");
        }
    }

    @Test
    void settingsOutOfRangeAreRefusedSayingWhatIsExpected() {
        assertThatThrownBy(() -> new CertificateAuthority.Settings("Weft.Local", Duration.ofHours(1), null, null))
                .hasMessageContaining("expected lower-case letters");
        assertThatThrownBy(() -> new CertificateAuthority.Settings("weft.local", Duration.ofSeconds(5), null, null))
                .hasMessageContaining("expected 10s to 30 days");
        assertThatThrownBy(() -> new CertificateAuthority.Settings("weft.local", Duration.ofHours(1),
                Path.of("ca.pem"), null)).hasMessageContaining("go together");
    }

    private static X509Certificate caCertificate(String issuer, KeyPair issuerKeys, String subject, KeyPair keys)
            throws Exception {
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(new X500Name(issuer), BigInteger.valueOf(
                now.toEpochMilli()), Date.from(now.minusSeconds(60)), Date.from(now.plus(Duration.ofDays(30))),
                new X500Name(subject), keys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate())));
    }
}
