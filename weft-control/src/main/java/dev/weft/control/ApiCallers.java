package dev.weft.control;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.weft.control.ca.AdminToken;
import dev.weft.control.ca.CertificateAuthority;
import dev.weft.registry.auth.RequestSignature;

import java.io.ByteArrayInputStream;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Who is calling the control plane's API, from a request's {@code Authorization} header, and whether that caller may
 * do what the request needs ({@link ApiAccess}); docs/security.md, "Credentials of the control plane's API".
 *
 * <ul>
 *   <li>{@code Bearer <operator token>}: the operator ({@link AdminToken}), allowed everything.</li>
 *   <li>{@code Bearer weft_jt_...}: a join token, for a sidecar of its service that holds no certificate yet;
 *       nothing is used up.</li>
 *   <li>{@code Weft-Signature ...} ({@link RequestSignature}): a sidecar's mesh certificate, checked against the CA's
 *       roots (current and overlap), its validity and the SPIFFE ID of our trust domain, with the signature over this
 *       request, a timestamp within ±{@value #SKEW_SECONDS} s and a nonce not seen in the last two minutes.</li>
 * </ul>
 *
 * <p>Thread: shared by every connection; called on their event loops. The nonce cache (Caffeine) and the counters are
 * thread-safe, the rest is immutable.
 */
final class ApiCallers {
    static final long SKEW_SECONDS = 60;
    /** A nonce outlives the ±60 s window it can be accepted in, so a replay is either seen or stale. */
    static final Duration NONCE_MEMORY = Duration.ofMinutes(2);
    /**
     * About 150 bytes each: 30 MB at most. Past it the oldest are dropped, and a replay of one of those within its
     * minute would pass: at this size that needs over 1,600 signed requests a second.
     */
    static final long MAX_NONCES = 200_000;
    /** A sidecar renewing, revoking or binding to a lease of another service ({@link LeaseOwners}). */
    static final String NOT_LEASE_OWNER = "not-lease-owner";
    static final List<String> REASONS = List.of("no-credentials", "invalid-token", "invalid-certificate",
            "invalid-signature", "stale-timestamp", "replayed-nonce", "wrong-service", "operator-only",
            NOT_LEASE_OWNER);

    static final List<String> PROOFS = List.of("operator-token", "join-token", "certificate");

    /** The caller, once authenticated: the operator ({@code service} null) or a sidecar of {@code service}. */
    record Caller(String service, String proof) {
        boolean operator() {
            return service == null;
        }
    }

    private final AdminToken admin;
    private final CertificateAuthority ca;
    private final boolean localMode;
    private final Clock clock;
    private final Cache<String, Boolean> nonces = Caffeine.newBuilder().expireAfterWrite(NONCE_MEMORY)
            .maximumSize(MAX_NONCES).build();
    private final Map<String, LongAdder> refused = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> accepted = new ConcurrentHashMap<>();

    /**
     * @param admin     the operator token, or null if this control plane accepts none (started in code without one)
     * @param ca        the certificate authority, or null: then only the operator token is accepted
     * @param localMode topology reads from loopback need no credentials (the embedded store; docs/security.md)
     */
    ApiCallers(AdminToken admin, CertificateAuthority ca, boolean localMode, Clock clock) {
        this.admin = admin;
        this.ca = ca;
        this.localMode = localMode;
        this.clock = clock;
        for (String r : REASONS) {
            refused.put(r, new LongAdder());
        }
        for (String p : PROOFS) {
            accepted.put(p, new LongAdder());
        }
    }

    boolean localMode() {
        return localMode;
    }

    /**
     * The caller this request proves itself to be.
     *
     * @throws ControlException 401 naming what is missing or wrong
     */
    Caller authenticate(String method, String target, byte[] body, String authorization, String needs) {
        if (authorization == null || authorization.isBlank()) {
            throw new ControlException(401, "no-credentials", method + " " + pathOf(target) + " needs " + needs
                    + ", and the request has no Authorization header (send Authorization: Bearer with the operator"
                    + " token, ./weft ... --admin-token-file FILE; a sidecar sends its join token or signs with its"
                    + " mesh certificate)");
        }
        String value = authorization.strip();
        if (value.regionMatches(true, 0, "Bearer ", 0, 7)) {
            String token = value.substring(7).strip();
            if (token.startsWith("weft_jt_")) {
                if (ca == null) {
                    throw new ControlException(401, "invalid-token", "this control plane runs no certificate"
                            + " authority, so it knows no join tokens (send the operator token)");
                }
                return new Caller(ca.joinTokenService(token), "join-token");
            }
            if (admin != null && admin.matches(token)) {
                return new Caller(null, "operator-token");
            }
            throw new ControlException(401, "invalid-token", "the bearer token is not this control plane's operator"
                    + " token (" + (admin == null || admin.file() == null ? "--admin-token-file"
                    : admin.file().toString()) + ") nor a join token (weft_jt_...)");
        }
        if (value.regionMatches(true, 0, RequestSignature.SCHEME + " ", 0, RequestSignature.SCHEME.length() + 1)) {
            return signed(method, target, body, value);
        }
        int space = value.indexOf(' ');
        throw new ControlException(401, "no-credentials", "unsupported Authorization scheme '"
                + (space < 0 ? value : value.substring(0, space)).replaceAll("[^A-Za-z0-9_-]", "?")
                + "' (expected Bearer or " + RequestSignature.SCHEME + ")");
    }

    private Caller signed(String method, String target, byte[] body, String value) {
        if (ca == null) {
            throw new ControlException(401, "invalid-certificate", "this control plane runs no certificate"
                    + " authority, so it trusts no mesh certificate (send the operator token)");
        }
        RequestSignature.Parsed p;
        try {
            p = RequestSignature.parse(value);
        } catch (IllegalArgumentException e) {
            throw new ControlException(401, "invalid-signature", e.getMessage());
        }
        long now = clock.instant().getEpochSecond();
        if (Math.abs(now - p.created()) > SKEW_SECONDS) {
            throw new ControlException(401, "stale-timestamp", "signed request created at " + p.created()
                    + ", " + (now - p.created()) + " s from this control plane's clock (" + now + "); accepted: within"
                    + " ±" + SKEW_SECONDS + " s (is the sidecar's clock right?)");
        }
        X509Certificate leaf;
        try {
            leaf = (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(p.certificateDer()));
        } catch (CertificateException | ClassCastException e) {
            throw new ControlException(401, "invalid-certificate", "unreadable certificate in the "
                    + RequestSignature.SCHEME + " header (expected a DER X.509 leaf, base64)");
        }
        String service = ca.certificateService(leaf);
        if (!RequestSignature.verify(leaf.getPublicKey(), p, method, target, body)) {
            throw new ControlException(401, "invalid-signature", "the signature does not verify with certificate "
                    + leaf.getSerialNumber().toString(16) + "'s key over " + method + " " + pathOf(target)
                    + " (expected SHA256withECDSA, or SHA256withRSA for an RSA key, over the signature base)");
        }
        if (nonces.asMap().putIfAbsent(p.nonce(), Boolean.TRUE) != null) {
            throw new ControlException(401, "replayed-nonce", "nonce " + p.nonce() + " was already used (a signed"
                    + " request is accepted once)");
        }
        return new Caller(service, "certificate");
    }

    /** @throws ControlException 403 when {@code caller} may not do what {@code need} says */
    static void authorize(ApiAccess.Need need, Caller caller, String method, String target) {
        if (caller.operator()) {
            return;
        }
        switch (need.kind()) {
            case OPEN, READ, SPANS, SIDECAR -> { }
            case SERVICE -> {
                if (!need.service().equals(caller.service())) {
                    throw new ControlException(403, "wrong-service", "a sidecar of service '" + caller.service()
                            + "' (by its " + caller.proof() + ") may register and deregister only '"
                            + caller.service() + "', not '" + need.service() + "'");
                }
            }
            case OPERATOR -> throw new ControlException(403, "operator-only", method + " " + pathOf(target)
                    + " needs the operator token; a sidecar's credentials (service '" + caller.service()
                    + "') do not allow it");
        }
    }

    /** Counts a request let through with {@code caller}'s credentials. */
    void accepted(Caller caller) {
        LongAdder counter = accepted.get(caller.proof());
        if (counter != null) {
            counter.increment();
        }
    }

    void refused(String reason) {
        LongAdder counter = refused.get(reason);
        if (counter != null) {
            counter.increment();
        }
    }

    String metricsText() {
        StringBuilder b = new StringBuilder("# HELP weft_control_refused_total API requests refused for their"
                + " credentials (401) or what the caller may do (403), by reason.\n"
                + "# TYPE weft_control_refused_total counter\n");
        for (String r : REASONS) {
            b.append("weft_control_refused_total{reason=\"").append(r).append("\"} ").append(refused.get(r).sum())
                    .append('\n');
        }
        b.append("# HELP weft_control_authenticated_total API requests let through on credentials, by what proved"
                + " the caller (requests that need none are not counted).\n"
                + "# TYPE weft_control_authenticated_total counter\n");
        for (String p : PROOFS) {
            b.append("weft_control_authenticated_total{proof=\"").append(p).append("\"} ")
                    .append(accepted.get(p).sum()).append('\n');
        }
        return b.toString();
    }

    private static String pathOf(String target) {
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        return path.length() > 100 ? path.substring(0, 100) + "..." : path;
    }
}
