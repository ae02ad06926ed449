package dev.weft.dataplane.authz;

import dev.weft.dataplane.resilience.PolicyDocument;
import dev.weft.dataplane.resilience.ServicePolicy;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code authorization} section of a policy document: what it accepts, and each way it is refused. */
class AuthorizationDocumentTest {

    private static ServicePolicy provider(String section) throws Exception {
        Map<String, ServicePolicy> p = PolicyDocument.parse("p.yaml", "services:\n  provider:\n" + section.indent(4));
        return p.get("provider");
    }

    private static void refused(String section, String message) {
        assertThatThrownBy(() -> provider(section)).isInstanceOf(PolicyDocument.PolicyException.class)
                .hasMessage(message);
    }

    @Test
    void theBriefsExampleParsesIntoRulesInDocumentOrder() throws Exception {
        ServicePolicy p = provider("""
                authorization:
                  default: deny
                  rules:
                    - name: no-admin-from-web
                      action: deny
                      from: [web, "spiffe://weft.local/service/batch"]
                      paths: ["/admin"]
                      methods: [POST, delete]
                    - name: consumers-read
                      action: allow
                      from: [consumer]
                      methods: [GET]
                """);
        AuthorizationPolicy a = p.authorization();
        assertThat(a.defaultAllow()).isFalse();
        assertThat(a.rules()).extracting(AuthorizationPolicy.Rule::toString).containsExactly(
                "no-admin-from-web: deny from [web, spiffe://weft.local/service/batch] paths [/admin] methods [POST, DELETE]",
                "consumers-read: allow from [consumer] methods [GET]");
    }

    @Test
    void withoutTheSectionEveryCallerIsAllowedAndADefaultAloneIsEnough() throws Exception {
        assertThat(provider("timeout: 2s\n").authorization()).isSameAs(AuthorizationPolicy.NONE);
        AuthorizationPolicy denyAll = provider("authorization: {default: deny}\n").authorization();
        assertThat(denyAll.defaultAllow()).isFalse();
        assertThat(denyAll.rules()).isEmpty();
        assertThat(provider("authorization: {rules: [{name: r, action: deny, from: [web]}]}\n").authorization()
                .defaultAllow()).as("default allow when 'default' is left out").isTrue();
    }

    @Test
    void aRoutesPolicyCarriesItsServicesAuthorization() throws Exception {
        ServicePolicy p = provider("""
                authorization: {default: deny}
                routes:
                  - name: search
                    match: {path-prefix: /search}
                """);
        assertThat(p.routes().getFirst().policy().authorization()).isSameAs(p.authorization());
    }

    @Test
    void unknownKeysAndMissingRequiredOnesAreRefusedWithTheirLine() {
        refused("authorization: {defaults: deny}\n",
                "p.yaml:3: key 'services.provider.authorization.defaults': expected one of [default, rules] "
                        + "(unknown key 'defaults')");
        refused("""
                authorization:
                  rules:
                    - name: r
                      action: deny
                      callers: [web]
                """, "p.yaml:7: key 'services.provider.authorization.rules[0].callers': expected one of "
                + "[action, from, methods, name, paths] (unknown key 'callers')");
        refused("""
                authorization:
                  rules:
                    - action: deny
                """, "p.yaml:5: key 'services.provider.authorization.rules[0].name': expected a rule name of "
                + "lower-case letters, digits, '.', '_', '-' (at most 63; it labels weft_authz_denied_total), not 'default'");
        refused("""
                authorization:
                  rules:
                    - name: r
                """, "p.yaml:5: key 'services.provider.authorization.rules[0].action': expected allow or deny");
    }

    @Test
    void badValuesAreRefusedWithTheExpectedForm() {
        refused("authorization: {default: maybe}\n",
                "p.yaml:3: key 'services.provider.authorization.default': expected allow or deny (got 'maybe')");
        refused("authorization: {rules: [{name: r, action: permit}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].action': expected allow or deny (got 'permit')");
        refused("authorization: {rules: {name: r}}\n",
                "p.yaml:3: key 'services.provider.authorization.rules': expected a list of rules "
                        + "(- name: ..., action: allow|deny, from: [...])");
        refused("authorization: {rules: [{name: Bad Name, action: deny}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].name': expected a rule name of lower-case "
                        + "letters, digits, '.', '_', '-' (at most 63; it labels weft_authz_denied_total), not "
                        + "'default' (got 'Bad Name')");
        refused("authorization: {rules: [{name: default, action: deny}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].name': expected a rule name of lower-case "
                        + "letters, digits, '.', '_', '-' (at most 63; it labels weft_authz_denied_total), not "
                        + "'default' (got 'default')");
    }

    @Test
    void eachListIsNonEmptyAndEachItemIsCheckedByAllowList() {
        refused("authorization: {rules: [{name: r, action: deny, from: web}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].from': expected a non-empty list of \"*\", "
                        + "a service name or spiffe://TRUST-DOMAIN/service/NAME, such as [a, b] (leave the key out for any)");
        refused("authorization: {rules: [{name: r, action: deny, methods: []}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].methods': expected a non-empty list of "
                        + "an HTTP method such as GET, such as [a, b] (leave the key out for any)");
        refused("""
                authorization:
                  rules:
                    - name: r
                      action: deny
                      from:
                        - web
                        - "spiffe://weft.local/workload/web"
                """, "p.yaml:9: key 'services.provider.authorization.rules[0].from[1]': expected \"*\", a service "
                + "name or spiffe://TRUST-DOMAIN/service/NAME (got 'spiffe://weft.local/workload/web')");
        refused("authorization: {rules: [{name: r, action: deny, from: [\"web app\"]}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].from[0]': expected \"*\", a service name or "
                        + "spiffe://TRUST-DOMAIN/service/NAME (got 'web app')");
        refused("authorization: {rules: [{name: r, action: deny, methods: [\"GET /\"]}]}\n",
                "p.yaml:3: key 'services.provider.authorization.rules[0].methods[0]': expected an HTTP method such "
                        + "as GET (got 'GET /')");
        String pathExpected = "expected a path prefix starting with / (no query, '%', ';', '\\', '//', '.' or '..' "
                + "segment)";
        for (String bad : new String[] {"admin", "/admin?x=1", "/a%64min", "//admin", "/a/../admin", "/a b",
                "/admin;x"}) {
            refused("authorization: {rules: [{name: r, action: deny, paths: [\"" + bad + "\"]}]}\n",
                    "p.yaml:3: key 'services.provider.authorization.rules[0].paths[0]': " + pathExpected
                            + " (got '" + bad + "')");
        }
    }

    @Test
    void ruleNamesAreUniqueInAService() {
        refused("""
                authorization:
                  rules:
                    - {name: r, action: deny, from: [web]}
                    - {name: r, action: allow}
                """, "p.yaml:6: key 'services.provider.authorization.rules[1].name': expected a rule name used once "
                + "in the service (duplicate 'r')");
    }
}
