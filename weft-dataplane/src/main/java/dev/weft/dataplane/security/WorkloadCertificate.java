package dev.weft.dataplane.security;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The sidecar's identity at one moment: its private key (made in this process, never written anywhere), the leaf the
 * control plane issued for it, the chain to send peers, and the roots to trust. Immutable; a renewal makes a new one.
 * {@link #toString} never shows the key.
 *
 * @param chain       the leaf first, then any intermediates (not the root)
 * @param trustBundle the roots of the trust domain
 * @param receivedAt  when this process got it: renewal is timed from here, not from notBefore (which the CA backdates)
 */
public record WorkloadCertificate(PrivateKey key, X509Certificate certificate, List<X509Certificate> chain,
                                  List<X509Certificate> trustBundle, String spiffeId, Instant receivedAt) {
    public WorkloadCertificate {
        chain = List.copyOf(chain);
        trustBundle = List.copyOf(trustBundle);
    }

    public String serial() {
        return certificate.getSerialNumber().toString(16);
    }

    public Instant notAfter() {
        return certificate.getNotAfter().toInstant();
    }

    /** When a third of the lifetime is left: time to renew, with that third left for retries if the CA is away. */
    public Instant renewAt() {
        Duration life = Duration.between(receivedAt, notAfter());
        return receivedAt.plus(life.multipliedBy(2).dividedBy(3));
    }

    public boolean isValidAt(Instant now) {
        return now.isBefore(notAfter()) && !now.isBefore(certificate.getNotBefore().toInstant());
    }

    @Override
    public String toString() {
        return "certificate " + serial() + " for " + spiffeId + " until " + notAfter();
    }
}
