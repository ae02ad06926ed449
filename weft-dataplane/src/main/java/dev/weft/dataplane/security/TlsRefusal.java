package dev.weft.dataplane.security;

/**
 * Why a mesh connection was refused at the TLS layer: the {@code reason} label of {@code weft_tls_refused_total}
 * (docs/security.md). One constant per thing a peer can get wrong, so that an operator reading the metric knows what
 * to fix without reading logs.
 */
public enum TlsRefusal {
    /** Plaintext (WMP or HTTP/1.1) on the inbound port of a {@code --mtls strict} sidecar. */
    PLAINTEXT("plaintext"),
    /** A TLS ClientHello reached a sidecar that holds no certificate yet (permissive, before its first one). */
    NO_LOCAL_CERTIFICATE("no_local_certificate"),
    /** The peer sent no certificate. */
    NO_CERTIFICATE("no_certificate"),
    /** The peer's chain does not lead to a root of our trust bundle (self-signed, another CA). */
    UNTRUSTED("untrusted"),
    /** The peer's certificate expired. */
    EXPIRED("expired"),
    /** The peer's certificate is not valid yet. */
    NOT_YET_VALID("not_yet_valid"),
    /** The certificate does not carry exactly one URI SAN {@code spiffe://<domain>/service/<name>}. */
    SPIFFE_ID("spiffe_id"),
    /** A SPIFFE ID of another trust domain, though signed by a root we trust. */
    TRUST_DOMAIN("trust_domain"),
    /** Dialling side: the peer's certificate names another service than the one registered at its address. */
    WRONG_SERVICE("wrong_service"),
    /** The peer and we agreed on no ALPN protocol: it does not speak our WMP version. */
    ALPN("alpn"),
    /** Any other handshake failure (no common cipher or version, a timeout, a broken record). */
    HANDSHAKE("handshake");

    private final String label;

    TlsRefusal(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** Thrown by {@link PeerVerifier}: the handshake fails, and the reason is already counted. */
    static final class PeerRejected extends java.security.cert.CertificateException {
        final TlsRefusal reason;

        PeerRejected(TlsRefusal reason, String message) {
            super(message);
            this.reason = reason;
        }
    }
}
