package dev.weft.registry.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECKey;
import java.security.interfaces.RSAKey;
import java.time.Instant;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A request to the control plane signed with a sidecar's mesh key, in the spirit of RFC 9421 (HTTP message
 * signatures), carried in one header:
 *
 * <pre>Authorization: Weft-Signature cert=BASE64(leaf DER),created=EPOCH-SECONDS,nonce=BASE64URL(16 random bytes),sig=BASE64</pre>
 *
 * <p>The signature covers the {@linkplain #signatureBase signature base}: the method, the request target (raw path
 * and query), {@code created}, {@code nonce} and the SHA-256 of the body, one per line. It is made with the JDK's
 * {@link Signature} for the key's algorithm ({@code SHA256withECDSA} for EC keys, {@code SHA256withRSA} for RSA), and
 * verified with the public key of the certificate sent; the control plane checks that certificate against its own
 * roots, the timestamp within ±60 s and the nonce as never seen (docs/security.md). What it proves: whoever sent this
 * request holds the key of a certificate the mesh's CA issued, now, for this exact request.
 *
 * <p>Thread: any; stateless.
 */
public final class RequestSignature {
    public static final String SCHEME = "Weft-Signature";
    /** Bounds what a verifier parses before any cryptography: a leaf is about 700 bytes of DER. */
    public static final int MAX_HEADER_CHARS = 8192;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A parsed header: nothing in it is verified yet. */
    public record Parsed(byte[] certificateDer, long created, String nonce, byte[] signature) {}

    /** The key and certificate to sign with; a supplier returns null while the sidecar holds none. */
    public record Signer(PrivateKey key, X509Certificate leaf) {
        public Signer {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(leaf, "leaf");
        }
    }

    private RequestSignature() {}

    /**
     * Credentials that sign each request with the key and certificate {@code current} returns at that moment (a
     * renewed certificate is used from the next request on), and fall back to {@code otherwise} while it returns null.
     */
    public static ControlCredentials credentials(Supplier<Signer> current, ControlCredentials otherwise) {
        Objects.requireNonNull(current, "current");
        Objects.requireNonNull(otherwise, "otherwise");
        return (method, target, body) -> {
            Signer s = current.get();
            return s == null ? otherwise.authorization(method, target, body)
                    : sign(s, method, target, body, Instant.now());
        };
    }

    /** The {@code Authorization} value for one request, with a fresh nonce. */
    public static String sign(Signer signer, String method, String target, byte[] body, Instant now) {
        byte[] nonceBytes = new byte[16];
        RANDOM.nextBytes(nonceBytes);
        String nonce = Base64.getUrlEncoder().withoutPadding().encodeToString(nonceBytes);
        long created = now.getEpochSecond();
        try {
            Signature s = Signature.getInstance(algorithm(signer.key()));
            s.initSign(signer.key());
            s.update(signatureBase(method, target, created, nonce, body));
            Base64.Encoder b64 = Base64.getEncoder();
            return SCHEME + " cert=" + b64.encodeToString(signer.leaf().getEncoded()) + ",created=" + created
                    + ",nonce=" + nonce + ",sig=" + b64.encodeToString(s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a request to the control plane: " + e.getMessage(), e);
        }
    }

    /**
     * Reads an {@code Authorization} value of this scheme.
     *
     * @throws IllegalArgumentException saying what is malformed
     */
    public static Parsed parse(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, SCHEME + " ", 0, SCHEME.length() + 1)) {
            throw new IllegalArgumentException("not a " + SCHEME + " authorization");
        }
        if (authorization.length() > MAX_HEADER_CHARS) {
            throw new IllegalArgumentException(SCHEME + " header longer than " + MAX_HEADER_CHARS + " characters");
        }
        String cert = null;
        String created = null;
        String nonce = null;
        String sig = null;
        for (String part : authorization.substring(SCHEME.length() + 1).strip().split(",", -1)) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("malformed " + SCHEME + " parameter '" + abbreviate(part)
                        + "' (expected cert=...,created=...,nonce=...,sig=...)");
            }
            String name = part.substring(0, eq).strip().toLowerCase(Locale.ROOT);
            String value = part.substring(eq + 1).strip();
            String previous = switch (name) {
                case "cert" -> { String p = cert; cert = value; yield p; }
                case "created" -> { String p = created; created = value; yield p; }
                case "nonce" -> { String p = nonce; nonce = value; yield p; }
                case "sig" -> { String p = sig; sig = value; yield p; }
                default -> throw new IllegalArgumentException("unknown " + SCHEME + " parameter '" + abbreviate(name)
                        + "' (expected cert, created, nonce, sig)");
            };
            if (previous != null) {
                throw new IllegalArgumentException(SCHEME + " parameter '" + name + "' given twice");
            }
        }
        if (cert == null || created == null || nonce == null || sig == null) {
            throw new IllegalArgumentException(SCHEME + " needs cert, created, nonce and sig; missing "
                    + (cert == null ? "cert" : created == null ? "created" : nonce == null ? "nonce" : "sig"));
        }
        if (!nonce.matches("[A-Za-z0-9_-]{16,64}")) {
            throw new IllegalArgumentException("malformed nonce (expected 16 to 64 base64url characters)");
        }
        if (!created.matches("[0-9]{1,12}")) {
            throw new IllegalArgumentException("malformed created '" + abbreviate(created)
                    + "' (expected seconds since the epoch)");
        }
        try {
            return new Parsed(Base64.getDecoder().decode(cert), Long.parseLong(created), nonce,
                    Base64.getDecoder().decode(sig));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed base64 in cert or sig: " + e.getMessage(), e);
        }
    }

    /** Whether {@code p.signature()} is {@code key}'s signature over this request's signature base. */
    public static boolean verify(PublicKey key, Parsed p, String method, String target, byte[] body) {
        try {
            Signature s = Signature.getInstance(algorithm(key));
            s.initVerify(key);
            s.update(signatureBase(method, target, p.created(), p.nonce(), body));
            return s.verify(p.signature());
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** What is signed: RFC 9421's derived components and parameters, one per line. */
    public static byte[] signatureBase(String method, String target, long created, String nonce, byte[] body) {
        String base = "\"@method\": " + method.toUpperCase(Locale.ROOT) + "\n"
                + "\"@request-target\": " + target + "\n"
                + "\"content-digest\": sha-256=:" + Base64.getEncoder().encodeToString(sha256(body)) + ":\n"
                + "\"@signature-params\": (\"@method\" \"@request-target\" \"content-digest\");created=" + created
                + ";nonce=\"" + nonce + "\"";
        return base.getBytes(StandardCharsets.UTF_8);
    }

    /** The JDK signature algorithm for a key: SHA-256 with ECDSA or RSA, the kinds the mesh's CA issues. */
    public static String algorithm(java.security.Key key) {
        if (key instanceof ECKey) {
            return "SHA256withECDSA";
        }
        if (key instanceof RSAKey) {
            return "SHA256withRSA";
        }
        throw new IllegalArgumentException("unsupported key type " + key.getAlgorithm() + " (expected EC or RSA)");
    }

    private static byte[] sha256(byte[] body) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(body == null ? new byte[0] : body);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
