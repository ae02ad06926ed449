package dev.weft.control.ca;

import dev.weft.registry.auth.RequestSignature;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control plane's API wants credentials (docs/security.md, "Credentials of the control plane's API"): real HTTP
 * to a real control plane with its CA, each credential a sidecar or an operator would send, each refusal with its
 * status, code and count.
 */
class ApiCredentialsTest {
    @TempDir
    Path dir;

    private static final String ENDPOINT = "{\"host\": \"127.0.0.1\", \"port\": 7001, \"leaseId\": \"%s\"}";

    /** A lease granted to the operator, for endpoint writes whose credentials are the point of the test. */
    private static String lease(CaFixture f) throws Exception {
        CaFixture.Answer a = f.send("PUT", "/v1/leases", "{\"ttlMillis\": 30000}", "Bearer " + f.operatorToken());
        assertThat(a.status()).as(a.text()).isEqualTo(200);
        return a.body().get("leaseId").asText();
    }

    /** A certificate for {@code service} with {@code keys}, as a sidecar gets it with its join token. */
    static X509Certificate certificate(CaFixture f, String service, KeyPair keys) throws Exception {
        CaFixture.Answer issued = f.issue(service, f.token(service, Duration.ofMinutes(5), false),
                CaFixture.csrPem(keys));
        assertThat(issued.status()).as(issued.text()).isEqualTo(200);
        return Pem.readCertificates(issued.body().get("certificate").asText(), "issued").getFirst();
    }

    static String signed(KeyPair keys, X509Certificate cert, String method, String path, String body,
                                 Instant at) {
        return RequestSignature.sign(new RequestSignature.Signer(keys.getPrivate(), cert), method, path,
                body == null ? null : body.getBytes(StandardCharsets.UTF_8), at);
    }

    @Test
    void aRegistrationNeedsCredentialsAndJoinTokensRegisterOnlyTheirOwnService() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String lease = lease(f);
            String path = "/v1/services/provider/endpoints/p1";
            String body = ENDPOINT.formatted(lease);

            CaFixture.Answer none = f.send("PUT", path, body, null);
            assertThat(none.status()).isEqualTo(401);
            assertThat(none.body().get("code").asText()).isEqualTo("no-credentials");
            assertThat(none.body().get("error").asText()).contains("no Authorization header")
                    .contains("service 'provider'");
            assertThat(f.send("PUT", "/v1/leases", "{\"ttlMillis\": 3000}", null).status())
                    .as("a lease needs credentials too").isEqualTo(401);

            String consumers = f.token("consumer", Duration.ofMinutes(5), false);
            CaFixture.Answer other = f.send("PUT", path, body, "Bearer " + consumers);
            assertThat(other.status()).isEqualTo(403);
            assertThat(other.body().get("code").asText()).isEqualTo("wrong-service");
            assertThat(other.body().get("error").asText()).contains("'consumer'").contains("not 'provider'");
            assertThat(f.send("DELETE", path, null, "Bearer " + consumers).status())
                    .as("nor deregister it").isEqualTo(403);

            String once = f.token("provider", Duration.ofMinutes(5), true);
            CaFixture.Answer own = f.send("PUT", path, body, "Bearer " + once);
            assertThat(own.status()).as(own.text()).isEqualTo(200);
            assertThat(f.send("PUT", "/v1/leases/" + lease + "/keepalive", null, "Bearer " + once).status())
                    .isEqualTo(200);
            // Registering did not spend the single-use token's one certificate.
            assertThat(f.issue("provider", once, CaFixture.csrPem(CaFixture.p256())).status()).isEqualTo(200);

            assertThat(f.send("PUT", path, body, "Bearer weft_jt_" + "A".repeat(43)).status()).isEqualTo(401);
            assertThat(f.send("PUT", "/v1/policies/p", "services: {}\n", "Bearer " + consumers).body()
                    .get("code").asText()).as("policies are the operator's").isEqualTo("operator-only");

            assertThat(f.get("/metrics")).contains("weft_control_refused_total{reason=\"no-credentials\"} 2")
                    .contains("weft_control_refused_total{reason=\"wrong-service\"} 2")
                    .contains("weft_control_refused_total{reason=\"invalid-token\"} 1")
                    .contains("weft_control_refused_total{reason=\"operator-only\"} 1");
        }
    }

    @Test
    void aSignedRegistrationIsAcceptedOnceFromItsOwnServiceAndRefusedStaleReplayedTamperedOrForeign()
            throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            KeyPair providerKeys = CaFixture.p256();
            X509Certificate provider = certificate(f, "provider", providerKeys);
            KeyPair consumerKeys = CaFixture.p256();
            X509Certificate consumer = certificate(f, "consumer", consumerKeys);
            String path = "/v1/services/provider/endpoints/p1";
            String body = ENDPOINT.formatted(lease(f));

            String good = signed(providerKeys, provider, "PUT", path, body, Instant.now());
            CaFixture.Answer accepted = f.send("PUT", path, body, good);
            assertThat(accepted.status()).as(accepted.text()).isEqualTo(200);

            CaFixture.Answer replayed = f.send("PUT", path, body, good);
            assertThat(replayed.status()).isEqualTo(401);
            assertThat(replayed.body().get("code").asText()).isEqualTo("replayed-nonce");

            CaFixture.Answer stale = f.send("PUT", path, body,
                    signed(providerKeys, provider, "PUT", path, body, Instant.now().minusSeconds(120)));
            assertThat(stale.status()).isEqualTo(401);
            assertThat(stale.body().get("code").asText()).isEqualTo("stale-timestamp");
            assertThat(stale.body().get("error").asText()).contains("within ±60 s");

            String otherBody = body.replace("7001", "7666");
            CaFixture.Answer tampered = f.send("PUT", path, otherBody,
                    signed(providerKeys, provider, "PUT", path, body, Instant.now()));
            assertThat(tampered.status()).as("the signature covers the body").isEqualTo(401);
            assertThat(tampered.body().get("code").asText()).isEqualTo("invalid-signature");

            CaFixture.Answer otherPath = f.send("DELETE", path, null,
                    signed(providerKeys, provider, "DELETE", "/v1/services/provider/endpoints/p2", null,
                            Instant.now()));
            assertThat(otherPath.status()).as("and the method and path").isEqualTo(401);

            CaFixture.Answer wrongService = f.send("PUT", path, body,
                    signed(consumerKeys, consumer, "PUT", path, body, Instant.now()));
            assertThat(wrongService.status()).isEqualTo(403);
            assertThat(wrongService.body().get("code").asText()).isEqualTo("wrong-service");

            // A certificate of another CA, even naming our trust domain and the right service.
            try (CaFixture foreign = new CaFixture(dir.resolve("foreign"), CertificateAuthority.Settings.defaults())) {
                KeyPair keys = CaFixture.p256();
                X509Certificate theirs = certificate(foreign, "provider", keys);
                CaFixture.Answer untrusted = f.send("PUT", path, body,
                        signed(keys, theirs, "PUT", path, body, Instant.now()));
                assertThat(untrusted.status()).isEqualTo(401);
                assertThat(untrusted.body().get("code").asText()).isEqualTo("invalid-certificate");
            }

            CaFixture.Answer deregistered = f.send("DELETE", path, null,
                    signed(providerKeys, provider, "DELETE", path, null, Instant.now()));
            assertThat(deregistered.status()).as(deregistered.text()).isEqualTo(200);
            assertThat(f.get("/metrics")).contains("weft_control_refused_total{reason=\"replayed-nonce\"} 1")
                    .contains("weft_control_refused_total{reason=\"stale-timestamp\"} 1")
                    .contains("weft_control_refused_total{reason=\"invalid-signature\"} 2")
                    .contains("weft_control_refused_total{reason=\"invalid-certificate\"} 1");
        }
    }

    @Test
    void policiesAndTokensNeedTheOperatorToken() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String policy = "services:\n  provider:\n    timeout: 2s\n";
            assertThat(f.send("PUT", "/v1/policies/team", policy, null).status()).isEqualTo(401);
            assertThat(f.send("DELETE", "/v1/policies/team", null, null).status()).isEqualTo(401);
            assertThat(f.send("PUT", "/v1/policies/team", policy, "Bearer " + f.operatorToken()).status())
                    .isEqualTo(200);
            assertThat(f.post("/v1/tokens", java.util.Map.of("service", "provider"), null).status()).isEqualTo(401);
            assertThat(f.post("/v1/tokens", java.util.Map.of("service", "provider")).status()).isEqualTo(200);
            // The token file is the operator's alone.
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files
                    .getPosixFilePermissions(dir.resolve("data").resolve(AdminToken.FILE)))).isEqualTo("rw-------");
        }
    }

    @Test
    void topologyReadsFromLoopbackNeedNothingInLocalModeAndCredentialsFromElsewhere() throws Exception {
        try (CaFixture f = new CaFixture(dir.resolve("local"), CertificateAuthority.Settings.defaults())) {
            assertThat(f.send("GET", "/v1/services", null, null).status()).isEqualTo(200);
            assertThat(f.send("GET", "/v1/policies", null, null).status()).isEqualTo(200);
        }
        try (CaFixture f = new CaFixture(dir.resolve("remote"), CertificateAuthority.Settings.defaults(),
                CaFixture.outsideAddress())) {
            for (String read : new String[]{"/v1/services", "/v1/services/provider", "/v1/leases", "/v1/policies",
                    "/v1/diagnose", "/v1/ui/map", "/api/v2/traces"}) {
                CaFixture.Answer a = f.send("GET", read, null, null);
                assertThat(a.status()).as(read + ": " + a.text()).isEqualTo(401);
                assertThat(a.body().get("error").asText()).contains("reveals the mesh's topology");
            }
            assertThat(f.send("GET", "/v1/services", null, "Bearer " + f.operatorToken()).status()).isEqualTo(200);
            String token = f.token("provider", Duration.ofMinutes(5), false);
            assertThat(f.send("GET", "/v1/services", null, "Bearer " + token).status())
                    .as("a sidecar reads the topology it routes by").isEqualTo(200);
            // Probes and the CA's public routes stay open.
            assertThat(f.send("GET", "/v1/health", null, null).status()).isEqualTo(200);
            assertThat(f.send("GET", "/v1/trust-bundle", null, null).status()).isEqualTo(200);
            assertThat(f.send("GET", "/metrics", null, null).status()).isEqualTo(200);
            assertThat(f.send("GET", "/ui/", null, null).status()).isEqualTo(200);
        }
    }
}
