package dev.weft.control.ca;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases are owned and span posting needs credentials (docs/security.md, "Credentials of the control plane's API"):
 * real HTTP to a real control plane with its CA, each caller with the credentials a sidecar or an operator sends.
 */
class LeaseOwnershipTest {
    @TempDir
    Path dir;

    private static final String ENDPOINT = "{\"host\": \"127.0.0.1\", \"port\": 7001, \"leaseId\": \"%s\"}";
    private static final String SPANS = "[{\"traceId\":\"00000000000000010000000000000001\",\"id\":\"0000000000000001\","
            + "\"kind\":\"CLIENT\",\"name\":\"get\",\"timestamp\":1700000000000000,\"duration\":1000,"
            + "\"localEndpoint\":{\"serviceName\":\"consumer\"}}]";

    private static String leaseOf(CaFixture.Answer granted) {
        assertThat(granted.status()).as(granted.text()).isEqualTo(200);
        return granted.body().get("leaseId").asText();
    }

    private static String signed(KeyPair keys, X509Certificate cert, String method, String path, String body) {
        return ApiCredentialsTest.signed(keys, cert, method, path, body, Instant.now());
    }

    private static X509Certificate certificate(CaFixture f, String service, KeyPair keys) throws Exception {
        return ApiCredentialsTest.certificate(f, service, keys);
    }

    @Test
    void onlyTheLeasesOwnServiceOrTheOperatorRenewsRevokesOrBindsToIt() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String provider = "Bearer " + f.token("provider", Duration.ofMinutes(5), false);
            String consumer = "Bearer " + f.token("consumer", Duration.ofMinutes(5), false);
            String lease = leaseOf(f.send("PUT", "/v1/leases", "{\"ttlMillis\": 30000}", provider));
            assertThat(f.send("PUT", "/v1/services/provider/endpoints/p1", ENDPOINT.formatted(lease), provider)
                    .status()).isEqualTo(200);

            String keepalive = "/v1/leases/" + lease + "/keepalive";
            CaFixture.Answer renew = f.send("PUT", keepalive, null, consumer);
            assertThat(renew.status()).as(renew.text()).isEqualTo(403);
            assertThat(renew.body().get("code").asText()).isEqualTo("not-lease-owner");
            assertThat(renew.body().get("error").asText()).contains("'consumer'", "service 'provider'", "renew");
            CaFixture.Answer revoke = f.send("DELETE", "/v1/leases/" + lease, null, consumer);
            assertThat(revoke.status()).as(revoke.text()).isEqualTo(403);
            // A signed request proves the same service as the join token: refused alike.
            KeyPair keys = CaFixture.p256();
            X509Certificate consumerCert = certificate(f, "consumer", keys);
            assertThat(f.send("DELETE", "/v1/leases/" + lease, null,
                    signed(keys, consumerCert, "DELETE", "/v1/leases/" + lease, null)).status()).isEqualTo(403);
            // Nor may it bind its own endpoint to the provider's lease.
            String bind = ENDPOINT.formatted(lease);
            assertThat(f.send("PUT", "/v1/services/consumer/endpoints/c1", bind, consumer).status()).isEqualTo(403);

            assertThat(f.send("GET", "/v1/services/provider", null, null).body().get("endpoints").size())
                    .as("the provider's endpoint is still there").isEqualTo(1);
            assertThat(f.send("PUT", keepalive, null, provider).status()).isEqualTo(200);
            assertThat(f.send("DELETE", "/v1/leases/" + lease, null, "Bearer " + f.operatorToken()).status())
                    .as("the operator may").isEqualTo(200);
            assertThat(f.get("/metrics")).contains("weft_control_refused_total{reason=\"not-lease-owner\"} 4");
        }
    }

    @Test
    void aLeaseTheOperatorTookBelongsToTheServiceOfItsEndpoints() throws Exception {
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String operator = "Bearer " + f.operatorToken();
            String provider = "Bearer " + f.token("provider", Duration.ofMinutes(5), false);
            String consumer = "Bearer " + f.token("consumer", Duration.ofMinutes(5), false);
            String lease = leaseOf(f.send("PUT", "/v1/leases", "{\"ttlMillis\": 30000}", operator));
            assertThat(f.send("PUT", "/v1/services/provider/endpoints/p1", ENDPOINT.formatted(lease), operator)
                    .status()).isEqualTo(200);
            assertThat(f.send("PUT", "/v1/leases/" + lease + "/keepalive", null, consumer).status()).isEqualTo(403);
            assertThat(f.send("PUT", "/v1/leases/" + lease + "/keepalive", null, provider).status()).isEqualTo(200);

            // One bound for several services (synthetic registrations): only the operator's.
            String shared = leaseOf(f.send("PUT", "/v1/leases", "{\"ttlMillis\": 30000}", operator));
            for (String service : new String[]{"a", "b"}) {
                assertThat(f.send("PUT", "/v1/services/" + service + "/endpoints/x", ENDPOINT.formatted(shared),
                        operator).status()).isEqualTo(200);
            }
            assertThat(f.send("DELETE", "/v1/leases/" + shared, null,
                    "Bearer " + f.token("a", Duration.ofMinutes(5), false)).status()).isEqualTo(403);
            assertThat(f.send("DELETE", "/v1/leases/" + shared, null, operator).status()).isEqualTo(200);
        }
    }

    @Test
    void postingSpansNeedsCredentialsExceptFromLoopbackInLocalMode() throws Exception {
        try (CaFixture f = new CaFixture(dir.resolve("local"), CertificateAuthority.Settings.defaults())) {
            assertThat(f.send("POST", "/api/v2/spans", SPANS, null).status()).isEqualTo(202);
        }
        try (CaFixture f = new CaFixture(dir.resolve("remote"), CertificateAuthority.Settings.defaults(),
                CaFixture.outsideAddress())) {
            CaFixture.Answer none = f.send("POST", "/api/v2/spans", SPANS, null);
            assertThat(none.status()).as(none.text()).isEqualTo(401);
            assertThat(none.body().get("error").asText()).contains("posted spans feed traces");
            assertThat(f.send("POST", "/api/v2/spans", SPANS,
                    "Bearer " + f.token("consumer", Duration.ofMinutes(5), false)).status()).isEqualTo(202);
            KeyPair keys = CaFixture.p256();
            X509Certificate cert = certificate(f, "consumer", keys);
            assertThat(f.send("POST", "/api/v2/spans", SPANS, signed(keys, cert, "POST", "/api/v2/spans", SPANS))
                    .status()).as("a sidecar holding its certificate signs the batch").isEqualTo(202);
            assertThat(f.send("POST", "/api/v2/spans", SPANS, "Bearer " + f.operatorToken()).status())
                    .isEqualTo(202);
            assertThat(f.send("GET", "/api/v2/traces", null, "Bearer " + f.operatorToken()).text())
                    .contains("consumer");
            assertThat(f.get("/metrics")).contains("weft_control_refused_total{reason=\"no-credentials\"} 1");
        }
    }
}
