package dev.weft.dataplane.security;

import dev.weft.registry.ServiceNames;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.CertPath;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateParsingException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Decides whether a peer's certificate is a member of our mesh, on both sides of a mesh connection: its chain leads
 * to a root of the trust bundle we hold now (several roots during a root rotation's overlap), the leaf is valid now,
 * and it carries exactly one URI SAN, {@code spiffe://<our trust domain>/service/<a valid service name>}. Nothing else
 * is trusted: not the JDK's or the system's CAs, not a host name (peers are addressed by IP and port).
 *
 * <p>Why a trust manager that reads {@link SidecarIdentity#current()} at each handshake instead of a fixed list: a
 * renewal brings the control plane's bundle of that moment, so a root added for a rotation is trusted by new
 * connections without rebuilding the TLS context; established connections are not re-verified.
 *
 * <p>Thread: called by BoringSSL's verify callback on the connection's event loop, once per full handshake; it keeps
 * no state besides what the supplier gives, so any number of loops can call it at once.
 */
final class PeerVerifier extends X509ExtendedTrustManager {
    /** Whether we are the accepting side (the peer is a client) or the dialling side. */
    interface Refusals {
        void refused(boolean server, TlsRefusal reason, String detail);
    }

    private static final String PREFIX = "spiffe://";
    private final Supplier<WorkloadCertificate> current;
    private final Refusals refusals;

    PeerVerifier(Supplier<WorkloadCertificate> current, Refusals refusals) {
        this.current = current;
        this.refusals = refusals;
    }

    /** The trust domain of a SPIFFE ID made by our CA ({@code spiffe://weft.local/service/x} gives weft.local). */
    static String trustDomain(String spiffeId) {
        String rest = spiffeId.substring(PREFIX.length());
        return rest.substring(0, rest.indexOf('/'));
    }

    /**
     * The peer identity of a leaf this verifier accepted (its one SPIFFE ID, read again: once per connection).
     *
     * @throws TlsRefusal.PeerRejected when the leaf carries no usable SPIFFE ID (always this type, so that the
     *                                  refusal is counted by its reason)
     */
    static PeerIdentity identityOf(X509Certificate leaf, String trustDomain) throws TlsRefusal.PeerRejected {
        List<String> uris;
        try {
            uris = uriSans(leaf);
        } catch (CertificateParsingException | RuntimeException e) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.SPIFFE_ID, "unreadable subjectAltName: " + e.getMessage());
        }
        if (uris.size() != 1) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.SPIFFE_ID, "expected exactly one URI SAN, found "
                    + uris.size() + " " + uris);
        }
        String id = uris.getFirst();
        String expected = PREFIX + trustDomain + "/service/";
        if (!id.startsWith(expected)) {
            boolean spiffe = id.startsWith(PREFIX) && id.indexOf('/', PREFIX.length()) > PREFIX.length();
            throw new TlsRefusal.PeerRejected(spiffe && !id.startsWith(PREFIX + trustDomain + "/")
                    ? TlsRefusal.TRUST_DOMAIN : TlsRefusal.SPIFFE_ID,
                    "SPIFFE ID " + id + " is not " + expected + "<service>");
        }
        String service = id.substring(expected.length());
        if (!ServiceNames.isValid(service)) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.SPIFFE_ID, "SPIFFE ID " + id + " names no valid service ("
                    + ServiceNames.RULE + ")");
        }
        return new PeerIdentity(id, service);
    }

    private static List<String> uriSans(X509Certificate leaf) throws CertificateParsingException {
        List<String> uris = new ArrayList<>(1);
        var sans = leaf.getSubjectAlternativeNames();
        if (sans != null) {
            for (List<?> san : sans) {
                if (san.size() == 2 && Integer.valueOf(6).equals(san.get(0))) {
                    uris.add(String.valueOf(san.get(1)));
                }
            }
        }
        return uris;
    }

    private void verify(X509Certificate[] chain, boolean server) throws CertificateException {
        try {
            check(chain);
        } catch (TlsRefusal.PeerRejected e) {
            refusals.refused(server, e.reason, e.getMessage());
            throw e;
        }
    }

    private void check(X509Certificate[] chain) throws CertificateException {
        WorkloadCertificate ours = current.get();
        if (ours == null) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.NO_LOCAL_CERTIFICATE, "this sidecar holds no certificate"
                    + " yet, so it trusts no peer");
        }
        if (chain == null || chain.length == 0) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.NO_CERTIFICATE, "the peer sent no certificate");
        }
        X509Certificate leaf = chain[0];
        try {
            leaf.checkValidity();
        } catch (CertificateExpiredException e) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.EXPIRED, "certificate " + leaf.getSerialNumber().toString(16)
                    + " expired at " + leaf.getNotAfter().toInstant());
        } catch (CertificateNotYetValidException e) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.NOT_YET_VALID, "certificate "
                    + leaf.getSerialNumber().toString(16) + " is valid only from " + leaf.getNotBefore().toInstant());
        }
        chainsToBundle(chain, ours.trustBundle());
        identityOf(leaf, trustDomain(ours.spiffeId()));
    }

    /** PKIX from the leaf to one of the roots (intermediates from the chain the peer sent), without revocation. */
    private static void chainsToBundle(X509Certificate[] chain, List<X509Certificate> roots)
            throws TlsRefusal.PeerRejected {
        Set<TrustAnchor> anchors = new HashSet<>();
        for (X509Certificate root : roots) {
            anchors.add(new TrustAnchor(root, null));
        }
        List<X509Certificate> path = new ArrayList<>(chain.length);
        for (X509Certificate c : chain) {
            if (!roots.contains(c)) { // a peer may send the root too; PKIX wants the path below the anchor
                path.add(c);
            }
        }
        try {
            CertPath certPath = CertificateFactory.getInstance("X.509").generateCertPath(path);
            PKIXParameters params = new PKIXParameters(anchors);
            params.setRevocationEnabled(false); // short lifetimes instead of revocation (docs/security.md)
            params.setDate(new Date());
            CertPathValidator.getInstance("PKIX").validate(certPath, params);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new TlsRefusal.PeerRejected(TlsRefusal.UNTRUSTED, "certificate "
                    + chain[0].getSerialNumber().toString(16) + " (issuer " + chain[0].getIssuerX500Principal().getName()
                    + ") does not chain to the trust bundle: " + e.getMessage());
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        verify(chain, true);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        verify(chain, false);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        verify(chain, true);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        verify(chain, false);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        verify(chain, true);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        verify(chain, false);
    }

    /** No CA names in the CertificateRequest: a peer has one certificate and sends it. */
    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}
