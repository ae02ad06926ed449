package dev.weft.dataplane.authz;

import dev.weft.dataplane.authz.AuthorizationPolicy.Action;
import dev.weft.dataplane.authz.AuthorizationPolicy.Rule;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The decision table: deny rules first (the first match decides), then allow rules, then the default; each rule's
 * callers, path prefixes and methods.
 */
class AuthorizationPolicyTest {
    /** The brief's example, with a default of deny. */
    private static final AuthorizationPolicy POLICY = AuthorizationPolicy.of(false, List.of(
            new Rule("no-admin-from-web", Action.DENY, List.of("web", "spiffe://weft.local/service/batch"),
                    List.of("/admin"), List.of("POST", "DELETE")),
            new Rule("consumers-read", Action.ALLOW, List.of("consumer"), null, List.of("GET")),
            new Rule("web-and-batch", Action.ALLOW, List.of("web", "spiffe://weft.local/service/batch"), null, null),
            new Rule("health-for-all", Action.ALLOW, List.of("*"), List.of("/healthz"), List.of("GET"))));

    /** {@code -} for no caller; the result is the rule that denied, or "allowed". */
    @ParameterizedTest(name = "{0} {1} {2} -> {3}")
    @CsvSource({
            // deny before allow: web is allowed everything but writes to /admin
            "web, POST, /admin, no-admin-from-web",
            "web, DELETE, /admin/users/7, no-admin-from-web",
            "web, delete, /admin, no-admin-from-web",
            "web, POST, /admin?x=1, no-admin-from-web",
            "web, GET, /admin, allowed",
            "web, POST, /administrator, allowed",
            "web, POST, /orders, allowed",
            // a SPIFFE ID in 'from' matches the ID and the service name it names; a name matches its SPIFFE ID
            "batch, POST, /admin, no-admin-from-web",
            "spiffe://weft.local/service/batch, POST, /admin, no-admin-from-web",
            "spiffe://weft.local/service/web, POST, /admin, no-admin-from-web",
            "spiffe://other.domain/service/batch, POST, /orders, default",
            "spiffe://weft.local/ns/x/service/web, GET, /orders, default",
            // allow rules: consumer reads only
            "consumer, GET, /orders, allowed",
            "consumer, POST, /orders, default",
            // the default, and a caller without identity: only rules for any caller
            "stranger, GET, /orders, default",
            "-, GET, /orders, default",
            "-, GET, /healthz, allowed",
            "'', GET, /healthz, allowed",
            "-, POST, /healthz, default",
            // a path the app may read otherwise than it is written fails closed: every path-scoped deny rule
            // matches, no path-scoped allow rule does
            "web, POST, //admin, no-admin-from-web",
            "web, POST, /%61dmin, no-admin-from-web",
            "web, POST, /x/../admin, no-admin-from-web",
            "web, POST, /./admin, no-admin-from-web",
            "web, POST, /admin;jsessionid=1, no-admin-from-web",
            "web, POST, /Admin, allowed",
            "web, GET, /x/../admin, allowed",
            "-, GET, /healthz/./, default",
            "-, GET, /%68ealthz, default",
            "web, POST, /orders?next=//admin, allowed",
    })
    void decides(String caller, String method, String path, String expected) {
        Rule r = POLICY.decide(caller.equals("-") ? null : caller, method, path);
        assertThat(r == null ? "allowed" : r.name()).isEqualTo(expected);
    }

    @Test
    void aDenialCarriesA403ForbiddenNamingItsRuleMadeOnce() {
        Rule r = POLICY.decide("web", "POST", "/admin");
        assertThat(r.error().status()).isEqualTo(403);
        assertThat(r.error().kind()).isEqualTo("forbidden");
        assertThat(r.error().getMessage()).isEqualTo("forbidden by rule no-admin-from-web");
        assertThat(r.error().unprocessed()).as("another instance would deny it too").isFalse();
        assertThat(POLICY.decide("web", "DELETE", "/admin").error()).isSameAs(r.error());
        assertThat(POLICY.decide("stranger", "GET", "/").error().getMessage()).startsWith("forbidden by rule default");
    }

    @Test
    void withoutASectionAndWithADefaultOfAllowWhatNoRuleMatchesGoesThrough() {
        assertThat(AuthorizationPolicy.NONE.decide(null, "DELETE", "/anything")).isNull();
        AuthorizationPolicy denyOnly = AuthorizationPolicy.of(true, List.of(
                new Rule("no-batch", Action.DENY, List.of("batch"), null, null)));
        assertThat(denyOnly.decide("batch", "GET", "/").name()).isEqualTo("no-batch");
        assertThat(denyOnly.decide("web", "GET", "/")).isNull();
        assertThat(denyOnly.decide(null, "GET", "/")).isNull();
    }

    @Test
    void aDenyRuleForAnyCallerMatchesRequestsWithoutIdentityAndATrailingSlashCoversTheSegment() {
        AuthorizationPolicy p = AuthorizationPolicy.of(true, List.of(
                new Rule("no-internal", Action.DENY, List.of("*"), List.of("/internal/"), null),
                new Rule("no-root-delete", Action.DENY, null, List.of("/"), List.of("DELETE"))));
        assertThat(p.decide(null, "GET", "/internal").name()).isEqualTo("no-internal");
        assertThat(p.decide("web", "GET", "/internal/x").name()).isEqualTo("no-internal");
        assertThat(p.decide("web", "GET", "/internals")).isNull();
        assertThat(p.decide(null, "DELETE", "/anything").name()).isEqualTo("no-root-delete");
        assertThat(p.decide(null, "OPTIONS", "*")).isNull();
    }

    @Test
    void decidingAllocatesNothing() {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        String[][] requests = {{"web", "POST", "/admin/x"}, {"consumer", "GET", "/orders"}, {null, "GET", "/healthz"},
                {"spiffe://weft.local/service/batch", "DELETE", "/admin"}, {"stranger", "PUT", "/%61dmin"}};
        long sink = 0;
        for (int i = 0; i < 20_000; i++) { // warm, so that what is measured is the decision, not class loading
            String[] r = requests[i % requests.length];
            sink += POLICY.decide(r[0], r[1], r[2]) == null ? 1 : 0;
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            String[] r = requests[i % requests.length];
            sink += POLICY.decide(r[0], r[1], r[2]) == null ? 1 : 0;
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(sink).isPositive();
        // The measuring itself may allocate a few bytes; 100,000 decisions allocating even 8 bytes each would be 800 KB.
        assertThat(allocated).as("bytes allocated by 100,000 decisions").isLessThan(1024);
    }
}
