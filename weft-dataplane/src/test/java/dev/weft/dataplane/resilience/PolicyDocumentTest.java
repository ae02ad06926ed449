package dev.weft.dataplane.resilience;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PolicyDocumentTest {

    @Test
    void theExampleDocumentTheReadmeAppliesIsValid() throws Exception {
        // The README's quick start runs `./weft apply -f examples/policies.yaml`: it must parse as it ships.
        Path example = Path.of("..", "examples", "policies.yaml");
        Map<String, ServicePolicy> p = PolicyDocument.parse(example.toString(), Files.readString(example));
        assertThat(p).containsOnlyKeys("provider", "*");
        assertThat(p.get("provider").timeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(p.get("*").timeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aFullDocumentParsesWithDefaultsForWhatItLeavesOut() throws Exception {
        Map<String, ServicePolicy> p = PolicyDocument.parse("policies.yaml", """
                services:
                  provider:
                    timeout: 2s
                    retries: {attempts: 2, budget: 10%}
                    rate-limit: {requests-per-second: 100, burst: 20, per-caller: 10}
                    routes:
                      - name: search
                        match: {path-prefix: /search, method: get}
                        timeout: 500ms
                  "*":
                    outlier-detection: {consecutive-failures: 3}
                """);
        ServicePolicy provider = p.get("provider");
        assertThat(provider.timeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(provider.retry().attempts()).isEqualTo(2);
        assertThat(provider.retry().budgetRatio()).isEqualTo(0.1);
        assertThat(provider.retry().minPerSecond()).isEqualTo(ServicePolicy.RetryPolicy.DEFAULT.minPerSecond());
        assertThat(provider.rateLimit()).isEqualTo(100);
        assertThat(provider.perCallerRate()).isEqualTo(10);
        ServicePolicy.Route search = provider.route("GET", "/search?q=x");
        assertThat(search.name()).isEqualTo("search");
        assertThat(search.policy().timeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(search.policy().retry().attempts()).isEqualTo(2); // inherited from the service
        assertThat(provider.route("POST", "/search")).isNull();
        assertThat(p.get("*").outlier().consecutiveFailures()).isEqualTo(3);
        assertThat(p.get("*").timeout()).isEqualTo(ServicePolicy.DEFAULT.timeout());
    }

    @Test
    void theOverloadGuardsHaveDefaultsAndCanBeSetPerService() throws Exception {
        Map<String, ServicePolicy> p = PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    concurrency-limit: {adaptive: true, min: 5, max: 50}
                    circuit-breaker: {max-connections: 64}
                    outbound-limit: {adaptive: true, min: 100}
                  consumer:
                    concurrency-limit: {min: 3}
                  other:
                    timeout: 1s
                """);
        assertThat(p.get("provider").concurrencyLimit()).isEqualTo(new ServicePolicy.ConcurrencyLimit(true, 5, 50, 0));
        assertThat(p.get("provider").maxConnections()).isEqualTo(64);
        assertThat(p.get("consumer").concurrencyLimit()).as("adaptive is off unless asked for")
                .isEqualTo(new ServicePolicy.ConcurrencyLimit(false, 3, 0, 0));
        assertThat(p.get("other").concurrencyLimit()).isEqualTo(ServicePolicy.ConcurrencyLimit.DEFAULT);
        assertThat(p.get("other").maxConnections()).isEqualTo(ServicePolicy.DEFAULT_MAX_CONNECTIONS);
        assertThat(p.get("provider").outboundLimit()).isEqualTo(new ServicePolicy.ConcurrencyLimit(true, 100, 0, 0));
        assertThat(p.get("other").outboundLimit()).isEqualTo(ServicePolicy.ConcurrencyLimit.OUTBOUND_DEFAULT);
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    outbound-limit: {min: 300, max: 100}
                """)).hasMessage("p.yaml:3: key 'services.provider.outbound-limit.max': expected a maximum of at "
                + "least min (300), or 0 for the default (1000)");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    concurrency-limit: {min: 20, max: 10}
                """)).hasMessage("p.yaml:3: key 'services.provider.concurrency-limit.max': expected a maximum of at "
                + "least min (20), or 0 for --capacity");
    }

    @Test
    void anUnknownKeyIsRefusedNamingFileLineKeyAndTheKnownKeys() {
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    timeout: 2s
                    retry: {attempts: 2}
                """)).hasMessage("p.yaml:4: key 'services.provider.retry': expected one of "
                + "[authorization, circuit-breaker, concurrency-limit, outbound-limit, outlier-detection, rate-limit, retries, routes, "
                + "slo, timeout] "
                + "(unknown key 'retry')");
    }

    @Test
    void aBadValueIsRefusedWithTheExpectedForm() {
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    timeout: soon
                """)).hasMessage("p.yaml:3: key 'services.provider.timeout': expected a duration such as 500ms, 1.5s, 2m or 1h (got 'soon')");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    retries: {attempts: 50}
                """)).hasMessageContaining("p.yaml:3: key 'services.provider.retries.attempts': expected a whole number from 1 to 10");
    }

    @Test
    void brokenYamlAndMissingSectionsAreRefused() {
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", "services: [unclosed"))
                .hasMessageStartingWith("p.yaml: not valid YAML");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", "other: 1\n"))
                .hasMessageContaining("key 'the document.other'");
    }

    @Test
    void anSloIsReadForDiagnosisAndRefusedWhenItIsNotOne() throws Exception {
        Map<String, ServicePolicy> p = PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    slo: {p99: 200ms, error-rate: 1%}
                  consumer:
                    slo: {error-rate: 0.5%}
                  other:
                    timeout: 1s
                """);
        assertThat(p.get("provider").slo()).isEqualTo(new ServicePolicy.Slo(java.time.Duration.ofMillis(200), 0.01));
        assertThat(p.get("consumer").slo()).isEqualTo(new ServicePolicy.Slo(null, 0.005));
        assertThat(p.get("other").slo()).isNull();
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    slo: {p99: 200ms, error-rate: 150%}
                """)).hasMessage("p.yaml:3: key 'services.provider.slo.error-rate': expected a percentage from 0% to 100%, such as 1%");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    slo: {p90: 200ms}
                """)).hasMessage("p.yaml:3: key 'services.provider.slo.p90': expected one of [error-rate, p99] (unknown key 'p90')");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    slo: {p99: 0ms}
                """)).hasMessageContaining("key 'services.provider.slo.p99': expected a latency above zero");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", """
                services:
                  provider:
                    slo: {}
                """)).hasMessageContaining("key 'services.provider.slo': expected p99 and/or error-rate");
    }
}
