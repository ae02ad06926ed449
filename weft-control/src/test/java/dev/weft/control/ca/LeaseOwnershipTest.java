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
 * Leases are owned, span posting needs credentials, and a sidecar's post keeps only its own service's spans
 * (docs/security.md, "Credentials of the control plane's API"): real HTTP to a real control plane with its CA, each
 * caller with the credentials a sidecar or an operator sends.
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
    void aLeaseKeepsItsOwnerWhenTheControlPlaneRestartsEvenWithNoEndpointBound() throws Exception {
        String lease;
        String providerToken;
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            providerToken = f.token("provider", Duration.ofMinutes(5), false);
            lease = leaseOf(f.send("PUT", "/v1/leases", "{\"ttlMillis\": 30000}", "Bearer " + providerToken));
        }
        // Same data dir: the lease comes back from the state file, and its owner with it (nothing in memory, and no
        // endpoint to guess the owner from).
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults())) {
            String keepalive = "/v1/leases/" + lease + "/keepalive";
            CaFixture.Answer consumer = f.send("PUT", keepalive, null,
                    "Bearer " + f.token("consumer", Duration.ofMinutes(5), false));
            assertThat(consumer.status()).as(consumer.text()).isEqualTo(403);
            assertThat(consumer.body().get("error").asText()).contains("service 'provider'");
            assertThat(f.send("PUT", "/v1/services/consumer/endpoints/c1", ENDPOINT.formatted(lease),
                    "Bearer " + f.token("consumer", Duration.ofMinutes(5), false)).status())
                    .as("nor can it claim the lease by binding first").isEqualTo(403);
            assertThat(f.send("PUT", keepalive, null, "Bearer " + providerToken).status()).isEqualTo(200);
            assertThat(f.send("GET", "/v1/leases", null, null).body().get("leases").get(0).get("owner").asText())
                    .isEqualTo("provider");
            assertThat(f.get("/metrics")).contains("weft_control_refused_total{reason=\"not-lease-owner\"} 2");
        }
    }

    @Test
    void aSidecarsPostKeepsItsOwnServicesSpansAndRefusesAndCountsTheOthers() throws Exception {
        String mixed = "[" + span(1, "consumer") + "," + span(2, "provider") + "," + span(3, "consumer") + "]";
        try (CaFixture f = new CaFixture(dir, CertificateAuthority.Settings.defaults(), CaFixture.outsideAddress())) {
            String operator = "Bearer " + f.operatorToken();
            CaFixture.Answer own = f.send("POST", "/api/v2/spans", "[" + span(4, "consumer") + "]",
                    "Bearer " + f.token("consumer", Duration.ofMinutes(5), false));
            assertThat(own.status()).isEqualTo(202);
            assertThat(own.text()).as("nothing refused, nothing to say (as Zipkin answers)").isEmpty();

            CaFixture.Answer byToken = f.send("POST", "/api/v2/spans", mixed,
                    "Bearer " + f.token("consumer", Duration.ofMinutes(5), false));
            assertThat(byToken.status()).as("a partly stored batch is still accepted: the exporter must not resend it")
                    .isEqualTo(202);
            assertThat(byToken.body().get("refused").asInt()).isEqualTo(1);
            assertThat(byToken.body().get("code").asText()).isEqualTo("span-not-senders");
            assertThat(byToken.body().get("error").asText()).contains("not 'consumer'");
            KeyPair keys = CaFixture.p256();
            X509Certificate cert = certificate(f, "consumer", keys);
            CaFixture.Answer bySignature = f.send("POST", "/api/v2/spans", mixed,
                    signed(keys, cert, "POST", "/api/v2/spans", mixed));
            assertThat(bySignature.body().get("refused").asInt()).as("a signed post alike").isEqualTo(1);

            String traces = f.send("GET", "/api/v2/traceMany?traceIds=" + traceId(1) + "," + traceId(2) + ","
                    + traceId(3) + "," + traceId(4), null, operator).text();
            assertThat(traces).contains(spanId(1), spanId(3), spanId(4)).doesNotContain(spanId(2));
            assertThat(f.send("GET", "/api/v2/services", null, operator).text()).doesNotContain("provider");
            assertThat(f.get("/metrics")).contains("weft_control_spans_refused_total{reason=\"span-not-senders\"} 2");

            CaFixture.Answer byOperator = f.send("POST", "/api/v2/spans", mixed, operator);
            assertThat(byOperator.status()).isEqualTo(202);
            assertThat(byOperator.text()).as("the operator may post any service's spans").isEmpty();
            assertThat(f.send("GET", "/api/v2/services", null, operator).text()).contains("provider");
            assertThat(f.get("/metrics")).contains("weft_control_spans_refused_total{reason=\"span-not-senders\"} 2");
        }
    }

    private static String traceId(int n) {
        return String.format("%032x", 0x5100 + n);
    }

    private static String spanId(int n) {
        return String.format("%016x", 0xa100 + n);
    }

    /** A client span of its own trace whose local service is {@code service}. */
    private static String span(int n, String service) {
        return "{\"traceId\":\"" + traceId(n) + "\",\"id\":\"" + spanId(n) + "\",\"kind\":\"CLIENT\","
                + "\"name\":\"get\",\"timestamp\":" + (System.currentTimeMillis() * 1000) + ",\"duration\":1000,"
                + "\"localEndpoint\":{\"serviceName\":\"" + service + "\"}}";
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
