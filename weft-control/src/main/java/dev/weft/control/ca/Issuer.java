package dev.weft.control.ca;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The key the CA signs with and the certificates above every leaf it issues: its own certificate, the intermediates
 * between it and the root, and the root sidecars trust.
 *
 * <p>Either generated at the first start into the data dir ({@code ca/root.pem}, {@code ca/root.key} with mode 0600 in
 * a 0700 directory) and loaded from there later, or the operator's root or intermediate ({@code --ca-cert} with its
 * chain up to the root, {@code --ca-key}). The key is read here and kept in memory; nothing sends it anywhere.
 *
 * <p>Why EC P-256 for the generated root and for sidecars' keys: every TLS 1.3 stack Weft meets (BoringSSL through
 * netty-tcnative, OpenSSL, the JDK) does it in hardware-friendly code; a key pair takes well under a millisecond to
 * make where RSA-2048 takes tens to hundreds, which matters to a sidecar that makes one per renewal; signatures and
 * certificates are small (fewer handshake bytes); and it gives about 128-bit security, the level of TLS's AES-128.
 *
 * @param intermediates the certificates between {@code cert} and {@code root}, {@code cert} first when it is not the
 *                      root itself; empty when the CA signs with its root
 */
record Issuer(PrivateKey key, X509Certificate cert, List<X509Certificate> intermediates, X509Certificate root,
              String origin) {
    static final String CERT_FILE = "root.pem";
    static final String KEY_FILE = "root.key";
    /** A generated root lives 10 years: sidecars' trust in it is the one thing a rotation has to move. */
    static final Duration ROOT_LIFETIME = Duration.ofDays(3650);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The root in {@code dir}, made there first if the directory holds none. */
    static Issuer generatedIn(Path dir, String trustDomain) throws IOException {
        Path certFile = dir.resolve(CERT_FILE);
        Path keyFile = dir.resolve(KEY_FILE);
        if (Files.exists(certFile) || Files.exists(keyFile)) {
            if (!Files.exists(certFile) || !Files.exists(keyFile)) {
                throw new IOException("found only one of " + certFile + " and " + keyFile + " (expected both, or"
                        + " neither to make a new root; a new root means every sidecar needs a new certificate)");
            }
            requireOwnerOnly(keyFile, "the CA's private key");
            return load(Files.readString(certFile, StandardCharsets.US_ASCII), certFile.toString(),
                    Files.readString(keyFile, StandardCharsets.US_ASCII), keyFile.toString(), "root in " + dir);
        }
        createPrivateDirectory(dir);
        KeyPair keys = newEcKeyPair();
        X509Certificate root = selfSigned(keys, trustDomain);
        // The key first: a root certificate without its key would be useless, a key without a certificate is refused.
        writeAtomically(keyFile, Pem.privateKey(keys.getPrivate()));
        writeAtomically(certFile, Pem.write(root));
        return new Issuer(keys.getPrivate(), root, List.of(), root, "new root generated in " + dir);
    }

    /** The operator's CA: {@code certFile} holds its certificate first, then each issuer up to the root. */
    static Issuer operators(Path certFile, Path keyFile) throws IOException {
        return load(Files.readString(certFile, StandardCharsets.US_ASCII), "--ca-cert " + certFile,
                Files.readString(keyFile, StandardCharsets.US_ASCII), "--ca-key " + keyFile,
                "operator's CA from " + certFile);
    }

    /**
     * The roots of {@code --ca-overlap-roots}: each a self-signed CA certificate valid now, or the start fails naming
     * the file and the certificate.
     */
    static List<X509Certificate> roots(Path file) throws IOException {
        String what = "--ca-overlap-roots " + file;
        List<X509Certificate> roots = Pem.readCertificates(Files.readString(file, StandardCharsets.US_ASCII), what);
        for (int i = 0; i < roots.size(); i++) {
            X509Certificate c = roots.get(i);
            try {
                c.verify(c.getPublicKey());
                c.checkValidity();
            } catch (GeneralSecurityException e) {
                throw new IOException("certificate " + (i + 1) + " in " + what + " (" + c.getSubjectX500Principal()
                        + ") is not a self-signed root valid now: " + e.getMessage() + " (expected the roots to trust"
                        + " during a root rotation, PEM)", e);
            }
            if (c.getBasicConstraints() < 0) {
                throw new IOException("certificate " + (i + 1) + " in " + what + " (" + c.getSubjectX500Principal()
                        + ") is not a CA certificate (expected basicConstraints CA:TRUE)");
            }
        }
        return roots;
    }

    private static Issuer load(String certText, String certWhat, String keyText, String keyWhat, String origin)
            throws IOException {
        List<X509Certificate> chain = Pem.readCertificates(certText, certWhat);
        PrivateKey key = Pem.readPrivateKey(keyText, keyWhat);
        X509Certificate cert = chain.getFirst();
        if (!matches(key, cert.getPublicKey())) {
            throw new IOException("the key in " + keyWhat + " does not belong to the first certificate in " + certWhat
                    + " (" + cert.getSubjectX500Principal() + ")");
        }
        if (cert.getBasicConstraints() < 0 || (cert.getKeyUsage() != null && !cert.getKeyUsage()[5])) {
            throw new IOException("the first certificate in " + certWhat + " (" + cert.getSubjectX500Principal()
                    + ") is not a CA certificate (expected basicConstraints CA:TRUE and keyUsage keyCertSign)");
        }
        for (int i = 0; i < chain.size(); i++) {
            X509Certificate c = chain.get(i);
            X509Certificate signer = i + 1 < chain.size() ? chain.get(i + 1) : c;
            try {
                c.verify(signer.getPublicKey());
                c.checkValidity();
            } catch (GeneralSecurityException e) {
                throw new IOException("certificate " + (i + 1) + " in " + certWhat + " (" + c.getSubjectX500Principal()
                        + ") " + (i + 1 < chain.size() ? "is not signed by the next one" : "is not a self-signed root")
                        + " or is not valid now: " + e.getMessage() + " (expected the CA's certificate first, then"
                        + " each issuer up to and including the root)", e);
            }
        }
        X509Certificate root = chain.getLast();
        return new Issuer(key, cert, chain.subList(0, chain.size() - 1), root, origin);
    }

    static KeyPair newEcKeyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot make EC P-256 keys", e);
        }
    }

    /** The JCA signature algorithm for certificates signed with {@code key}. */
    static String signatureAlgorithm(PrivateKey key) {
        if (key instanceof ECKey ec) {
            return ec.getParams().getCurve().getField().getFieldSize() > 256 ? "SHA384withECDSA" : "SHA256withECDSA";
        }
        return "SHA256withRSA";
    }

    static BigInteger newSerial() {
        // 127 random bits, never zero: positive and within RFC 5280's 20 octets; unpredictable, as CA/B asks.
        return new BigInteger(127, RANDOM).setBit(0);
    }

    private static X509Certificate selfSigned(KeyPair keys, String trustDomain) throws IOException {
        X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "Weft")
                .addRDN(BCStyle.CN, "Weft root CA " + trustDomain).build();
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, newSerial(),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(ROOT_LIFETIME)), name, keys.getPublic());
        try {
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false,
                    new JcaX509ExtensionUtils().createSubjectKeyIdentifier(keys.getPublic()));
            PrivateKey key = keys.getPrivate();
            return new JcaX509CertificateConverter().getCertificate(
                    b.build(new JcaContentSignerBuilder(signatureAlgorithm(key)).build(key)));
        } catch (CertIOException | OperatorCreationException | GeneralSecurityException e) {
            throw new IOException("cannot make the root certificate: " + e.getMessage(), e);
        }
    }

    /** Whether {@code key} signs what {@code publicKey} verifies: the only test that works for every key type. */
    private static boolean matches(PrivateKey key, PublicKey publicKey) {
        try {
            byte[] probe = new byte[32];
            RANDOM.nextBytes(probe);
            String algorithm = signatureAlgorithm(key);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(publicKey);
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** {@code dir} with mode 0700, its parents as the umask makes them (the data dir's other files are not secret). */
    /** Refuses a secret's file that the group or others may read or write: it names the file and the fix. */
    static void requireOwnerOnly(Path file, String what) throws IOException {
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file);
        if (!OWNER_ONLY.containsAll(mode)) {
            throw new IOException(what + " " + file + " has mode " + PosixFilePermissions.toString(mode)
                    + " (expected rw-------: chmod 600 " + file + ")");
        }
    }

    static void createPrivateDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
        }
    }

    /**
     * Writes {@code text} to {@code file} with mode 0600 from the first byte (the temp file is created so, never
     * chmod-ed afterwards), then renames it over the old file: a crash leaves the old file or the new one.
     */
    static void writeAtomically(Path file, String text) throws IOException {
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(temp);
        ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        try (FileChannel out = FileChannel.open(temp, EnumSet.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(OWNER_ONLY))) {
            while (bytes.hasRemaining()) {
                out.write(bytes);
            }
            out.force(true);
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
