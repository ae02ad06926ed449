package dev.weft.control.ca;

import dev.weft.control.ControlException;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.Date;
import java.util.List;

/**
 * Makes and checks the CA's leaf certificates. A leaf names its workload only by the URI SAN
 * {@code spiffe://<trust-domain>/service/<name>}, is for TLS clients and servers alike (both EKUs: each sidecar is
 * both), cannot sign other certificates, and lives the configured TTL, never past its issuer.
 *
 * <p>Thread: the CA's thread.
 */
final class Leaves {
    /** Allows for clocks a little behind the CA's; a renewal timer counts from the receipt, so it does not shift it. */
    static final Duration BACKDATE = Duration.ofSeconds(30);
    private static final int MAX_CERTIFICATE_CHARS = 16 * 1024;
    private static final int MAX_PROOF_CHARS = 1024;

    private final Issuer issuer;
    /** The roots a renewing sidecar's certificate may be signed by besides the issuer (a rotation's old root). */
    private final List<X509Certificate> bundle;
    private final String trustDomain;
    private final Duration ttl;
    private final Clock clock;

    Leaves(Issuer issuer, List<X509Certificate> bundle, String trustDomain, Duration ttl, Clock clock) {
        this.issuer = issuer;
        this.bundle = bundle;
        this.trustDomain = trustDomain;
        this.ttl = ttl;
        this.clock = clock;
    }

    static String spiffeId(String trustDomain, String service) {
        return "spiffe://" + trustDomain + "/service/" + service;
    }

    CertificateAuthority.Issued issue(String service, PublicKey key) {
        Instant now = clock.instant();
        Instant notAfter = now.plus(ttl);
        Instant issuerEnd = issuer.cert().getNotAfter().toInstant();
        if (notAfter.isAfter(issuerEnd)) {
            notAfter = issuerEnd;   // a leaf outliving its issuer would fail verification from then on anyway
        }
        String spiffeId = spiffeId(trustDomain, service);
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "Weft")
                .addRDN(BCStyle.CN, service).build();
        try {
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer.cert(), Issuer.newSerial(),
                    Date.from(now.minus(BACKDATE)), Date.from(notAfter), subject, key);
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            b.addExtension(Extension.subjectAlternativeName, false,
                    new GeneralNames(new GeneralName(GeneralName.uniformResourceIdentifier, spiffeId)));
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            int usage = KeyUsage.digitalSignature | (key instanceof ECKey ? 0 : KeyUsage.keyEncipherment);
            b.addExtension(Extension.keyUsage, true, new KeyUsage(usage));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[]{
                    KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(key));
            b.addExtension(Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(issuer.cert()));
            X509Certificate leaf = new JcaX509CertificateConverter().getCertificate(b.build(
                    new JcaContentSignerBuilder(Issuer.signatureAlgorithm(issuer.key())).build(issuer.key())));
            return CertificateAuthority.Issued.of(spiffeId, leaf, issuer.intermediates(), bundle);
        } catch (Exception e) {
            throw new IllegalStateException("cannot sign a certificate for " + spiffeId + ": " + e.getMessage(), e);
        }
    }

    /**
     * The API listener's certificate: its names are DNS and IP SANs only (no SPIFFE ID, so it is no mesh identity and
     * the API's guard never takes it for a sidecar), for TLS servers only.
     */
    CertificateAuthority.Serving serving(java.security.KeyPair keys, Collection<String> dnsNames,
                                         Collection<java.net.InetAddress> addresses) {
        Instant now = clock.instant();
        Instant notAfter = now.plus(ttl);
        Instant issuerEnd = issuer.cert().getNotAfter().toInstant();
        if (notAfter.isAfter(issuerEnd)) {
            notAfter = issuerEnd;
        }
        java.util.List<GeneralName> names = new java.util.ArrayList<>();
        dnsNames.forEach(n -> names.add(new GeneralName(GeneralName.dNSName, n)));
        addresses.forEach(a -> names.add(new GeneralName(GeneralName.iPAddress,
                new org.bouncycastle.asn1.DEROctetString(a.getAddress()))));
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "Weft")
                .addRDN(BCStyle.CN, "weft control plane").build();
        try {
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer.cert(), Issuer.newSerial(),
                    Date.from(now.minus(BACKDATE)), Date.from(notAfter), subject, keys.getPublic());
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            b.addExtension(Extension.subjectAlternativeName, false,
                    new GeneralNames(names.toArray(GeneralName[]::new)));
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            b.addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(keys.getPublic()));
            b.addExtension(Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(issuer.cert()));
            X509Certificate leaf = new JcaX509CertificateConverter().getCertificate(b.build(
                    new JcaContentSignerBuilder(Issuer.signatureAlgorithm(issuer.key())).build(issuer.key())));
            java.util.List<X509Certificate> chain = new java.util.ArrayList<>();
            chain.add(leaf);
            chain.addAll(issuer.intermediates());
            chain.add(issuer.root());
            return new CertificateAuthority.Serving(keys.getPrivate(), List.copyOf(chain));
        } catch (Exception e) {
            throw new IllegalStateException("cannot sign the API's serving certificate: " + e.getMessage(), e);
        }
    }

    /**
     * The certificate a renewing sidecar holds, if this CA issued it, it is valid now and names {@code service}:
     * 401 {@code invalid-certificate} otherwise (403 {@code wrong-service} for another service's).
     */
    X509Certificate checkCurrent(String pem, String service) {
        if (pem == null || pem.isBlank() || pem.length() > MAX_CERTIFICATE_CHARS) {
            throw ControlException.badRequest("missing or oversized 'certificate' (expected the PEM leaf this"
                    + " control plane issued, at most " + MAX_CERTIFICATE_CHARS + " characters)");
        }
        X509Certificate cert;
        try {
            cert = Pem.readCertificates(pem, "the request's certificate").getFirst();
        } catch (IOException | RuntimeException e) {
            throw ControlException.badRequest("unreadable 'certificate': " + e.getMessage());
        }
        checkIssuedAndValid(cert, " (renew with a join token instead)",
                ": a sidecar whose certificate expired needs a join token again");
        String expected = spiffeId(trustDomain, service);
        String named = uriSan(cert);
        if (!expected.equals(named)) {
            throw new ControlException(403, "wrong-service", "certificate " + cert.getSerialNumber().toString(16)
                    + " is for " + named + ", not " + expected);
        }
        return cert;
    }

    /**
     * The service a sidecar's certificate names, if this CA (or an overlap root) signed it, it is valid now and its
     * one URI SAN is {@code spiffe://<our trust domain>/service/<name>}; 401 {@code invalid-certificate} otherwise.
     * Reads only immutable state, so it runs on any thread (the API's guard calls it on an event loop).
     */
    String serviceOf(X509Certificate cert) {
        checkIssuedAndValid(cert, " (nor by a root of its trust bundle)", "");
        String named = uriSan(cert);
        String prefix = "spiffe://" + trustDomain + "/service/";
        String service = named.startsWith(prefix) ? named.substring(prefix.length()) : null;
        if (service == null || !dev.weft.registry.ServiceNames.isValid(service)) {
            throw invalid("certificate " + cert.getSerialNumber().toString(16) + " names " + named + ", not "
                    + prefix + "<service>");
        }
        return service;
    }

    /** 401 {@code invalid-certificate} unless this CA signed {@code cert} and it is valid now; the advice ends each. */
    private void checkIssuedAndValid(X509Certificate cert, String notOursAdvice, String expiredAdvice) {
        if (!signedByUs(cert)) {
            throw invalid("certificate " + cert.getSerialNumber().toString(16) + " was not issued by this CA"
                    + notOursAdvice);
        }
        try {
            cert.checkValidity(Date.from(clock.instant()));
        } catch (CertificateExpiredException | CertificateNotYetValidException e) {
            throw invalid("certificate " + cert.getSerialNumber().toString(16) + " is not valid now (valid "
                    + cert.getNotBefore().toInstant() + " to " + cert.getNotAfter().toInstant() + ")"
                    + expiredAdvice);
        }
    }

    /**
     * Signed by the issuer, or (during a root rotation) directly by one of the overlap roots: a sidecar whose
     * certificate comes from the old root renews into the new one without a join token.
     */
    private boolean signedByUs(X509Certificate cert) {
        List<X509Certificate> signers = new java.util.ArrayList<>(bundle.size() + 1);
        signers.add(issuer.cert());
        signers.addAll(bundle);
        for (X509Certificate signer : signers) {
            try {
                cert.verify(signer.getPublicKey());
                return true;
            } catch (GeneralSecurityException | RuntimeException e) {
                // try the next one
            }
        }
        return false;
    }

    /** Checks that whoever holds {@code current}'s key signed {@code csrDer}: the proof of a renewal. */
    static void checkProof(X509Certificate current, String proof, byte[] csrDer) {
        if (proof == null || proof.isBlank() || proof.length() > MAX_PROOF_CHARS) {
            throw ControlException.badRequest("missing or oversized 'proof' (expected base64 of the current key's"
                    + " signature over the new CSR's DER)");
        }
        boolean valid;
        try {
            PublicKey key = current.getPublicKey();
            Signature verifier = Signature.getInstance(key instanceof ECKey ? "SHA256withECDSA" : "SHA256withRSA");
            verifier.initVerify(key);
            verifier.update(csrDer);
            valid = verifier.verify(Base64.getDecoder().decode(proof));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            valid = false;
        }
        if (!valid) {
            throw invalid("the proof does not verify with certificate " + current.getSerialNumber().toString(16)
                    + "'s key (expected SHA256withECDSA or SHA256withRSA of the new CSR's DER, by the current key)");
        }
    }

    /** The certificate's one URI SAN, or a description of what it has instead. */
    private static String uriSan(X509Certificate cert) {
        try {
            Collection<List<?>> names = cert.getSubjectAlternativeNames();
            if (names != null) {
                for (List<?> name : names) {
                    if (Integer.valueOf(GeneralName.uniformResourceIdentifier).equals(name.get(0))) {
                        return String.valueOf(name.get(1));
                    }
                }
            }
        } catch (GeneralSecurityException e) {
            // reported below
        }
        return "no SPIFFE ID";
    }

    private static ControlException invalid(String message) {
        return new ControlException(401, "invalid-certificate", message);
    }
}
