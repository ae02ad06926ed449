package dev.weft.registry.tls;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * A pin on a CA certificate, as kubeadm's {@code --discovery-token-ca-cert-hash}: {@code sha256:} and the hex of the
 * SHA-256 of the certificate's SubjectPublicKeyInfo (DER). It names the key, not the certificate, so a CA certificate
 * re-issued for the same key still matches. {@code ./weft token create} prints the control plane's; the same figure
 * comes from {@code openssl x509 -pubkey -noout -in root.pem | openssl pkey -pubin -outform der | sha256sum}.
 *
 * <p>Immutable; any thread.
 */
public record SpkiPin(String hex) {
    public static final String PREFIX = "sha256:";

    public SpkiPin {
        Objects.requireNonNull(hex, "hex");
        hex = hex.toLowerCase(Locale.ROOT);
        if (hex.length() != 64 || !hex.chars().allMatch(HexFormat::isHexDigit)) {
            throw new IllegalArgumentException("invalid pin '" + PREFIX + hex + "' (expected " + PREFIX
                    + " and 64 hex digits: the SHA-256 of the CA certificate's SubjectPublicKeyInfo, as ./weft token"
                    + " create prints it)");
        }
    }

    /** Parses {@code sha256:HEX}; the error names what was expected. */
    public static SpkiPin parse(String text) {
        String t = Objects.requireNonNull(text, "text").strip();
        if (!t.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            throw new IllegalArgumentException("invalid pin '" + text + "' (expected " + PREFIX
                    + "HEX: the SHA-256 of the CA certificate's SubjectPublicKeyInfo, as ./weft token create prints"
                    + " it)");
        }
        return new SpkiPin(t.substring(PREFIX.length()));
    }

    /** The pin of {@code cert}'s public key. */
    public static SpkiPin of(X509Certificate cert) {
        try {
            // PublicKey.getEncoded() of an X.509 key is its SubjectPublicKeyInfo, DER: what the pin is defined over.
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(cert.getPublicKey().getEncoded());
            return new SpkiPin(HexFormat.of().formatHex(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    public boolean matches(X509Certificate cert) {
        return equals(of(cert));
    }

    @Override
    public String toString() {
        return PREFIX + hex;
    }
}
