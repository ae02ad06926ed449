package dev.weft.dataplane.security;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The verifier's decisions on certificates made here: a trust bundle of several roots (a root rotation's overlap)
 * trusts leaves under any of them, a chain through an intermediate verifies, and each wrong certificate is refused
 * with its own reason, counted once.
 */
class PeerVerifierTest {
    private static final Instant NOW = Instant.now();
    private final List<TlsRefusal> counted = new ArrayList<>();
    private final Cert oldRoot = root("old root");
    private final Cert newRoot = root("new root");
    private final Cert otherRoot = root("someone else's root");

    private record Cert(KeyPair keys, X509Certificate cert) {
    }

    @Test
    void duringARootRotationLeavesUnderTheOldAndTheNewRootAreBothTrustedAndNoOtherRoot() throws Exception {
        PeerVerifier v = verifier(List.of(oldRoot.cert, newRoot.cert));
        v.checkClientTrusted(chain(leaf(oldRoot, "spiffe://weft.local/service/a")), "EC");
        v.checkServerTrusted(chain(leaf(newRoot, "spiffe://weft.local/service/b")), "EC");
        assertThat(counted).isEmpty();

        assertThatThrownBy(() -> v.checkClientTrusted(chain(leaf(otherRoot, "spiffe://weft.local/service/a")), "EC"))
                .hasMessageContaining("does not chain to the trust bundle");
        // Once the overlap ends, the bundle holds the new root only: the old root's leaves are refused.
        PeerVerifier after = verifier(List.of(newRoot.cert));
        assertThatThrownBy(() -> after.checkClientTrusted(chain(leaf(oldRoot, "spiffe://weft.local/service/a")), "EC"))
                .isInstanceOf(TlsRefusal.PeerRejected.class);
        assertThat(counted).containsExactly(TlsRefusal.UNTRUSTED, TlsRefusal.UNTRUSTED);
    }

    @Test
    void aChainThroughAnIntermediateVerifiesWhetherOrNotThePeerSendsTheRootToo() throws Exception {
        Cert intermediate = issue(oldRoot, "intermediate", null, true, NOW.plusSeconds(86400));
        Cert leaf = issue(intermediate, "leaf", "spiffe://weft.local/service/a", false, NOW.plusSeconds(3600));
        PeerVerifier v = verifier(List.of(oldRoot.cert));
        v.checkClientTrusted(new X509Certificate[] {leaf.cert, intermediate.cert}, "EC");
        v.checkClientTrusted(new X509Certificate[] {leaf.cert, intermediate.cert, oldRoot.cert}, "EC");
        assertThatThrownBy(() -> v.checkClientTrusted(new X509Certificate[] {leaf.cert}, "EC"))
                .hasMessageContaining("does not chain");
        assertThat(counted).containsExactly(TlsRefusal.UNTRUSTED);
    }

    @Test
    void eachWrongCertificateIsRefusedWithItsOwnReason() throws Exception {
        PeerVerifier v = verifier(List.of(oldRoot.cert));
        refuse(v, new X509Certificate[0], TlsRefusal.NO_CERTIFICATE);
        refuse(v, chain(issue(oldRoot, "x", "spiffe://weft.local/service/a", false, NOW.minusSeconds(1)).cert),
                TlsRefusal.EXPIRED);
        refuse(v, chain(leaf(oldRoot, "spiffe://other.example/service/a")), TlsRefusal.TRUST_DOMAIN);
        refuse(v, chain(leaf(oldRoot, "spiffe://weft.local/workload/a")), TlsRefusal.SPIFFE_ID);
        refuse(v, chain(leaf(oldRoot, "spiffe://weft.local/service/a/b")), TlsRefusal.SPIFFE_ID);
        refuse(v, chain(leaf(oldRoot, "https://weft.local/service/a")), TlsRefusal.SPIFFE_ID);
        refuse(v, chain(leaf(oldRoot)), TlsRefusal.SPIFFE_ID);   // no SAN at all
        refuse(v, chain(leaf(oldRoot, "spiffe://weft.local/service/a", "spiffe://weft.local/service/b")),
                TlsRefusal.SPIFFE_ID);
        refuse(verifier(null), chain(leaf(oldRoot, "spiffe://weft.local/service/a")),
                TlsRefusal.NO_LOCAL_CERTIFICATE);

        assertThat(PeerVerifier.identityOf(leaf(oldRoot, "spiffe://weft.local/service/billing-v2"), "weft.local"))
                .isEqualTo(new PeerIdentity("spiffe://weft.local/service/billing-v2", "billing-v2"));
    }

    private void refuse(PeerVerifier v, X509Certificate[] chain, TlsRefusal reason) {
        int before = counted.size();
        assertThatThrownBy(() -> v.checkClientTrusted(chain, "EC")).isInstanceOf(TlsRefusal.PeerRejected.class)
                .satisfies(e -> assertThat(((TlsRefusal.PeerRejected) e).reason).isEqualTo(reason));
        assertThat(counted.subList(before, counted.size())).containsExactly(reason);
    }

    /** A verifier whose own certificate (for service 'self') carries {@code bundle}; none when null. */
    private PeerVerifier verifier(List<X509Certificate> bundle) {
        WorkloadCertificate ours = bundle == null ? null : new WorkloadCertificate(oldRoot.keys.getPrivate(),
                oldRoot.cert, List.of(oldRoot.cert), bundle, "spiffe://weft.local/service/self", NOW);
        return new PeerVerifier(() -> ours, (server, reason, detail) -> counted.add(reason));
    }

    private static X509Certificate[] chain(X509Certificate leaf) {
        return new X509Certificate[] {leaf};
    }

    private static X509Certificate leaf(Cert issuer, String... uris) {
        return make(issuer, "leaf", uris.length == 0 ? null : uris, false, NOW.plusSeconds(3600)).cert;
    }

    private static Cert root(String name) {
        return issue(null, name, null, true, NOW.plusSeconds(86400));
    }

    private static Cert issue(Cert issuer, String name, String uri, boolean ca, Instant notAfter) {
        return make(issuer, name, uri == null ? null : new String[] {uri}, ca, notAfter);
    }

    private static Cert make(Cert issuer, String name, String[] uris, boolean ca, Instant notAfter) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair keys = g.generateKeyPair();
            X500Name subject = new X500Name("CN=" + name);
            X500Name issuerName = issuer == null ? subject
                    : X500Name.getInstance(issuer.cert.getSubjectX500Principal().getEncoded());
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuerName,
                    BigInteger.valueOf(System.nanoTime()), Date.from(NOW.minusSeconds(7200)), Date.from(notAfter),
                    subject, keys.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
            if (uris != null) {
                GeneralName[] names = new GeneralName[uris.length];
                for (int i = 0; i < uris.length; i++) {
                    names[i] = new GeneralName(GeneralName.uniformResourceIdentifier, uris[i]);
                }
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
            }
            var signer = new JcaContentSignerBuilder("SHA256withECDSA")
                    .build(issuer == null ? keys.getPrivate() : issuer.keys.getPrivate());
            return new Cert(keys, new JcaX509CertificateConverter().getCertificate(b.build(signer)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
