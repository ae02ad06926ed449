package dev.weft.registry.etcd;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A throwaway PKI made at test time: a CA, a server certificate for 127.0.0.1/localhost and client certificates, as
 * PEM files (certificates, and keys in PKCS#8, which both etcd and Netty read). EC P-256 keeps generation instant.
 */
final class TestCertificates {
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    /** One certificate and its key, written to {@code cert} and {@code key}. */
    record Issued(Path cert, Path key) {}

    private final Path dir;
    private final KeyPair caKeys;
    private final X500Name caName;
    final Path caFile;

    TestCertificates(Path dir, String caName) throws Exception {
        this.dir = dir;
        this.caKeys = newKeys();
        this.caName = new X500Name("CN=" + caName);
        JcaX509v3CertificateBuilder b = builder(this.caName, this.caName, caKeys);
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        this.caFile = writeCert(caName + "-ca.pem", sign(b, caKeys));
    }

    /** A server certificate valid for 127.0.0.1 and localhost. */
    Issued server(String name) throws Exception {
        KeyPair keys = newKeys();
        JcaX509v3CertificateBuilder b = builder(caName, new X500Name("CN=" + name), keys);
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[]{
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost")}));
        b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[]{
                KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
        return write(name, sign(b, caKeys), keys);
    }

    /** A client certificate whose common name is {@code name} (etcd takes it as the user name when auth is on). */
    Issued client(String name) throws Exception {
        KeyPair keys = newKeys();
        JcaX509v3CertificateBuilder b = builder(caName, new X500Name("CN=" + name), keys);
        b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
        return write(name, sign(b, caKeys), keys);
    }

    private static KeyPair newKeys() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private JcaX509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIAL.incrementAndGet()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject,
                keys.getPublic());
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder b, KeyPair issuerKeys) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate())));
    }

    private Issued write(String name, X509Certificate cert, KeyPair keys) throws Exception {
        Path certFile = writeCert(name + ".pem", cert);
        // getEncoded() of a JDK private key is PKCS#8.
        Path keyFile = Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", keys.getPrivate().getEncoded()),
                StandardCharsets.US_ASCII);
        return new Issued(certFile, keyFile);
    }

    private Path writeCert(String file, X509Certificate cert) throws Exception {
        return Files.writeString(dir.resolve(file), pem("CERTIFICATE", cert.getEncoded()), StandardCharsets.US_ASCII);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
