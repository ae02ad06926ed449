package dev.weft.control;

import dev.weft.control.ca.CertificateAuthority;
import io.netty.handler.codec.http.HttpMethod;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The identity routes of the control plane's API, answered by its {@link CertificateAuthority}:
 * {@code POST /v1/tokens} (a join token; {@link ApiGuard} lets only the operator through),
 * {@code POST /v1/certificates} (a certificate for a CSR, paid for with a token or the current certificate) and
 * {@code GET /v1/trust-bundle} (the roots). docs/security.md has the bodies and answers.
 *
 * <p>Thread: called on the connection's event loop by {@link ControlHttpHandler}, which writes the answer; the work
 * runs on the CA's thread. Refusals are {@link ControlException}s with the status and code the docs list, counted by
 * the CA under their code.
 */
final class IdentityApi {
    static final Duration DEFAULT_TOKEN_TTL = Duration.ofHours(1);
    static final String ROUTES = "POST /v1/tokens, POST /v1/certificates, GET /v1/trust-bundle";

    record TokenRequest(String service, Long ttlMillis, Boolean singleUse) {}

    record CertificateRequest(String service, String csr, String token, String certificate, String proof) {}

    private IdentityApi() {}

    static boolean handles(String segment) {
        return segment.equals("tokens") || segment.equals("certificates") || segment.equals("trust-bundle");
    }

    /** The answer's body, to be encoded as JSON; fails with a {@link ControlException} for a refusal. */
    static CompletableFuture<?> handle(CertificateAuthority ca, HttpMethod method, List<String> path, String body) {
        if (ca == null) {
            throw new ControlException(404, "not-found", "this control plane runs no certificate authority"
                    + " (started in code without one; ./weft control always runs one)");
        }
        if (path.size() != 2) {
            throw new ControlException(404, "not-found", "no route for " + method + " /" + String.join("/", path)
                    + " (identity routes: " + ROUTES + ")");
        }
        return switch (path.get(1)) {
            case "trust-bundle" -> {
                ControlHttpHandler.allow(method, "/v1/trust-bundle", HttpMethod.GET);
                yield CompletableFuture.completedFuture(Map.of("trustDomain", ca.trustDomain(),
                        "trustBundle", ca.trustBundlePem(), "caPin", ca.rootPin()));
            }
            case "tokens" -> {
                ControlHttpHandler.allow(method, "/v1/tokens", HttpMethod.POST);
                TokenRequest r = parse(ca, body, TokenRequest.class,
                        "{\"service\": \"provider\", \"ttlMillis\": 3600000, \"singleUse\": false}");
                Duration ttl = r.ttlMillis() == null ? DEFAULT_TOKEN_TTL : Duration.ofMillis(r.ttlMillis());
                yield ca.createToken(r.service(), ttl, Boolean.TRUE.equals(r.singleUse())).thenApply(t -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("token", t.token());
                    m.put("id", t.id());
                    m.put("service", t.service());
                    m.put("expiresAt", t.expiresAt().toString());
                    m.put("singleUse", t.singleUse());
                    // What a sidecar joining over TLS pins (--control-ca-pin), as kubeadm prints its CA hash.
                    m.put("caPin", ca.rootPin());
                    return m;
                });
            }
            default -> {
                ControlHttpHandler.allow(method, "/v1/certificates", HttpMethod.POST);
                CertificateRequest r = parse(ca, body, CertificateRequest.class,
                        "{\"service\": \"provider\", \"token\": \"weft_jt_...\", \"csr\": \"-----BEGIN CERTIFICATE"
                                + " REQUEST-----...\"}");
                if ((r.token() == null) == (r.certificate() == null)) {
                    ca.refused("bad-request");
                    throw ControlException.badRequest("expected either 'token' (a join token) or 'certificate' and"
                            + " 'proof' (a renewal), not " + (r.token() == null ? "neither" : "both"));
                }
                CompletableFuture<CertificateAuthority.Issued> issued = r.token() != null
                        ? ca.issueWithToken(r.service(), r.token(), r.csr())
                        : ca.renew(r.service(), r.certificate(), r.proof(), r.csr());
                yield issued.thenApply(IdentityApi::json);
            }
        };
    }

    private static Map<String, Object> json(CertificateAuthority.Issued i) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("spiffeId", i.spiffeId());
        m.put("serial", i.serial());
        m.put("notBefore", i.notBefore().toString());
        m.put("notAfter", i.notAfter().toString());
        m.put("certificate", i.certificate());
        m.put("chain", i.chain());
        m.put("trustBundle", i.trustBundle());
        return m;
    }

    private static <T> T parse(CertificateAuthority ca, String body, Class<T> type, String example) {
        try {
            return ControlJson.parse(body, type, example);
        } catch (ControlException e) {
            ca.refused("bad-request");
            throw e;
        }
    }
}
