package dev.weft.bench;

import dev.weft.control.ca.Pem;
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
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

/**
 * The certificates of the TLS peers ({@code haproxy-tls}, {@code nginx-tls}): a throwaway CA per run directory and a
 * leaf per proxy, all EC P-256 like Weft's (docs/security.md), so that the peers' mutual TLS between the two proxy
 * roles is like for like with Weft's mTLS. The CA is made by the first proxy of a run and read back by the others;
 * nothing outside the run directory is written or trusted.
 *
 * <p>Each leaf names {@code localhost} and {@code 127.0.0.1} (nginx checks the upstream's name against
 * {@code proxy_ssl_name}) and serves both as TLS server and client, as each proxy is one or the other.
 *
 * <p>Thread: the experiment's, which starts the proxies one after another.
 */
final class PeerCertificates {
    static final String CA_CERT = "peer-ca.pem";
    static final String CA_KEY = "peer-ca.key";
    /** What the consumer side expects the provider side's certificate to name ({@code proxy_ssl_name}). */
    static final String NAME = "localhost";
    private static final Duration LIFETIME = Duration.ofDays(2);

    /**
     * One proxy's files in the run directory.
     *
     * @param ca       the CA certificate both sides trust (and nothing else)
     * @param cert     the proxy's certificate
     * @param key      its private key (PKCS#8 PEM, mode 0600)
     * @param combined certificate then key in one file, as HAProxy's {@code crt} takes them
     */
    record Issued(Path ca, Path cert, Path key, Path combined) {}

    private PeerCertificates() {}

    /** The CA of {@code runDir} (made on first use) and a fresh leaf for {@code proxy} signed by it. */
    static Issued issue(Path runDir, String proxy) throws IOException {
        try {
            Path caCert = runDir.resolve(CA_CERT);
            Path caKeyFile = runDir.resolve(CA_KEY);
            X509Certificate ca;
            PrivateKey caKey;
            if (Files.exists(caCert) && Files.exists(caKeyFile)) {
                ca = Pem.readCertificates(Files.readString(caCert), caCert.toString()).getFirst();
                caKey = Pem.readPrivateKey(Files.readString(caKeyFile), caKeyFile.toString());
            } else {
                KeyPair pair = ecKeyPair();
                X500Name name = new X500Name("CN=Weft bench peer CA, O=Weft bench");
                ca = sign(name, name, pair.getPublic(), pair.getPrivate(), true);
                caKey = pair.getPrivate();
                SecretFile.write(caKeyFile, Pem.privateKey(caKey));
                Files.writeString(caCert, Pem.write(ca));
            }
            KeyPair leafPair = ecKeyPair();
            X509Certificate leaf = sign(new X500Name("CN=" + NAME + ", O=Weft bench, OU=" + proxy),
                    X500Name.getInstance(ca.getSubjectX500Principal().getEncoded()), leafPair.getPublic(), caKey,
                    false);
            Issued files = new Issued(caCert, runDir.resolve(proxy + "-cert.pem"), runDir.resolve(proxy + "-key.pem"),
                    runDir.resolve(proxy + "-combined.pem"));
            Files.writeString(files.cert(), Pem.write(leaf));
            SecretFile.write(files.key(), Pem.privateKey(leafPair.getPrivate()));
            SecretFile.write(files.combined(), Pem.write(leaf) + Pem.privateKey(leafPair.getPrivate()));
            return files;
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IOException("cannot make the TLS peers' certificates in " + runDir + ": " + e.getMessage(), e);
        }
    }

    private static KeyPair ecKeyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(X500Name subject, X500Name issuer, PublicKey key, PrivateKey signer,
                                        boolean isCa)
            throws GeneralSecurityException, IOException, OperatorCreationException {
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer,
                new BigInteger(127, new SecureRandom()), Date.from(now.minus(Duration.ofMinutes(5))),
                Date.from(now.plus(LIFETIME)), subject, key);
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(isCa));
        if (isCa) {
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } else {
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[]{
                    KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[]{
                    new GeneralName(GeneralName.dNSName, NAME), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
        }
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
    }
}
