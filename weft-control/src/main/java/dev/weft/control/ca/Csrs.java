package dev.weft.control.ca;

import dev.weft.control.ControlException;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.sec.SECObjectIdentifiers;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;
import org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;

import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.Map;
import java.util.Set;

/**
 * Reads a certificate signing request that a caller sent, treating its bytes as hostile: the text is capped before
 * anything decodes it, exactly one PEM block is taken and strictly base64-decoded, the DER is capped again and must be
 * one ASN.1 object with nothing after it, and only allow-listed key types and signature algorithms get as far as a
 * signature check. What comes out is the public key, proven by the CSR's own signature; everything else in the CSR
 * (subject, requested extensions and names) is ignored, since a sidecar's names come from its token or certificate.
 *
 * <p>Every refusal is a 400 {@code bad-csr} naming what was wrong and what was expected.
 */
final class Csrs {
    /** A P-256 CSR is about 450 characters of PEM, an RSA-4096 one about 1,700: room for both, nothing more. */
    static final int MAX_PEM_CHARS = 8 * 1024;
    static final int MAX_DER_BYTES = 4 * 1024;
    private static final String BEGIN = "-----BEGIN CERTIFICATE REQUEST-----";
    private static final String END = "-----END CERTIFICATE REQUEST-----";
    private static final Map<ASN1ObjectIdentifier, String> SIGNATURES = Map.of(
            X9ObjectIdentifiers.ecdsa_with_SHA256, "ecdsa-with-SHA256",
            X9ObjectIdentifiers.ecdsa_with_SHA384, "ecdsa-with-SHA384",
            PKCSObjectIdentifiers.sha256WithRSAEncryption, "sha256WithRSAEncryption",
            PKCSObjectIdentifiers.sha384WithRSAEncryption, "sha384WithRSAEncryption",
            PKCSObjectIdentifiers.sha512WithRSAEncryption, "sha512WithRSAEncryption");
    private static final Set<ASN1ObjectIdentifier> CURVES = Set.of(SECObjectIdentifiers.secp256r1,
            SECObjectIdentifiers.secp384r1);
    static final String EXPECTED = "(expected one PEM CERTIFICATE REQUEST with an EC P-256 or P-384 key, or RSA"
            + " 2048-4096, signed with SHA-256/384 ECDSA or SHA-256/384/512 RSA)";

    private Csrs() {}

    /** The public key a well-formed, allow-listed, correctly self-signed CSR carries. */
    static PublicKey publicKey(String pem) {
        PKCS10CertificationRequest csr = parse(der(pem));
        String signature = SIGNATURES.get(csr.getSignatureAlgorithm().getAlgorithm());
        if (signature == null) {
            throw refuse("signature algorithm " + csr.getSignatureAlgorithm().getAlgorithm().getId() + " not allowed");
        }
        SubjectPublicKeyInfo info = csr.getSubjectPublicKeyInfo();
        checkKeyType(info.getAlgorithm());
        PublicKey key;
        try {
            key = KeyFactory.getInstance(info.getAlgorithm().getAlgorithm().equals(X9ObjectIdentifiers.id_ecPublicKey)
                    ? "EC" : "RSA").generatePublic(new X509EncodedKeySpec(info.getEncoded()));
        } catch (Exception e) {
            throw refuse("unusable public key: " + e.getMessage());
        }
        if (key instanceof RSAPublicKey rsa) {
            int bits = rsa.getModulus().bitLength();
            if (bits < 2048 || bits > 4096) {
                throw refuse("RSA key of " + bits + " bits");
            }
        }
        boolean valid;
        try {
            valid = csr.isSignatureValid(new JcaContentVerifierProviderBuilder().build(key));
        } catch (Exception e) {
            throw refuse("cannot check its signature: " + e.getMessage());
        }
        if (!valid) {
            throw refuse("its signature does not verify with its own key (the CSR was altered, or signed with"
                    + " another key)");
        }
        return key;
    }

    /** The CSR's DER bytes, as signed by its key (for the proof of possession a renewal carries). */
    static byte[] der(String pem) {
        if (pem == null || pem.isBlank()) {
            throw refuse("missing");
        }
        if (pem.length() > MAX_PEM_CHARS) {
            throw refuse(pem.length() + " characters, over the limit of " + MAX_PEM_CHARS);
        }
        int begin = pem.indexOf(BEGIN);
        int end = pem.indexOf(END);
        if (begin < 0 || end < begin || pem.indexOf(BEGIN, begin + 1) >= 0
                || !pem.substring(0, begin).isBlank() || !pem.substring(end + END.length()).isBlank()) {
            throw refuse("not exactly one " + BEGIN + " ... " + END + " block");
        }
        String base64 = pem.substring(begin + BEGIN.length(), end).replaceAll("[\\r\\n\\t ]", "");
        byte[] der;
        try {
            der = Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw refuse("its body is not base64: " + e.getMessage());
        }
        if (der.length > MAX_DER_BYTES) {
            throw refuse(der.length + " bytes of DER, over the limit of " + MAX_DER_BYTES);
        }
        return der;
    }

    private static PKCS10CertificationRequest parse(byte[] der) {
        try {
            // One ASN.1 object, nothing after it: BouncyCastle refuses trailing bytes ("extra data").
            return new PKCS10CertificationRequest(der);
        } catch (Exception e) {
            // IOException for bad DER; IllegalArgumentException or ClassCastException for the wrong structure.
            throw refuse("not a PKCS#10 request: " + e.getMessage());
        }
    }

    private static void checkKeyType(AlgorithmIdentifier algorithm) {
        ASN1ObjectIdentifier oid = algorithm.getAlgorithm();
        if (oid.equals(X9ObjectIdentifiers.id_ecPublicKey)) {
            if (!(algorithm.getParameters() instanceof ASN1ObjectIdentifier curve) || !CURVES.contains(curve)) {
                // Never the parameters' text: BouncyCastle's toString of hostile ASN.1 throws (a UTF8String that is
                // not UTF-8, found by CertificateRequestFuzzTest), which answered 500 instead of this 400.
                throw refuse("EC key on " + (algorithm.getParameters() instanceof ASN1ObjectIdentifier named
                        ? "curve " + named.getId() : "explicit or missing curve parameters")
                        + " (not a named P-256 or P-384)");
            }
        } else if (!oid.equals(PKCSObjectIdentifiers.rsaEncryption)) {
            throw refuse("key type " + oid.getId() + " not allowed");
        }
    }

    private static ControlException refuse(String why) {
        return new ControlException(400, "bad-csr", "malformed or refused CSR: " + why + " " + EXPECTED);
    }
}
