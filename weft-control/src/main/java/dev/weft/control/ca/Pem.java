package dev.weft.control.ca;

import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * PEM in and out for the CA, through BouncyCastle's reader and writer and the JDK's certificate parser. Only for
 * trusted input (the CA's own files and the operator's); what a sidecar sends goes through {@link Csrs}.
 */
public final class Pem {
    private Pem() {}

    /** One PEM block per object: certificates, keys, CSRs, as OpenSSL writes them. */
    public static String write(Object... objects) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
            for (Object o : objects) {
                pem.writeObject(o);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write PEM", e);  // a StringWriter does not fail
        }
        return out.toString();
    }

    /**
     * A private key as unencrypted PKCS#8 ({@code PRIVATE KEY}): with its curve in the algorithm identifier, which the
     * OpenSSL EC form written from a JDK key would leave out.
     */
    public static String privateKey(PrivateKey key) {
        try {
            return write(new JcaPKCS8Generator(key, null));
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode a " + key.getAlgorithm() + " key as PKCS#8", e);
        }
    }

    public static String certificates(List<X509Certificate> certificates) {
        return write(certificates.toArray());
    }

    /**
     * Every certificate in {@code text}, in order.
     *
     * @param what names the source in errors, e.g. "--ca-cert /etc/weft/ca.pem"
     */
    public static List<X509Certificate> readCertificates(String text, String what) throws IOException {
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            List<X509Certificate> out = new ArrayList<>();
            byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
            for (var c : factory.generateCertificates(new ByteArrayInputStream(bytes))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IOException("no certificate in " + what + " (expected PEM: -----BEGIN CERTIFICATE-----)");
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot read the certificates in " + what + ": " + e.getMessage()
                    + " (expected PEM: -----BEGIN CERTIFICATE-----)", e);
        }
    }

    /** An unencrypted private key: PKCS#8 ({@code PRIVATE KEY}), or OpenSSL's {@code EC}/{@code RSA PRIVATE KEY}. */
    public static PrivateKey readPrivateKey(String text, String what) throws IOException {
        Object parsed;
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            parsed = parser.readObject();
        } catch (IOException | RuntimeException e) {
            throw new IOException("cannot read the private key in " + what + ": " + e.getMessage(), e);
        }
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        if (parsed instanceof PEMKeyPair pair) {
            // Only the private part: OpenSSL's EC form may leave the public key out.
            return converter.getPrivateKey(pair.getPrivateKeyInfo());
        }
        if (parsed instanceof PrivateKeyInfo info) {
            return converter.getPrivateKey(info);
        }
        throw new IOException("no usable private key in " + what + " (found "
                + (parsed == null ? "nothing" : parsed.getClass().getSimpleName())
                + "; expected an unencrypted PEM key: PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)");
    }
}
