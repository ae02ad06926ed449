package dev.weft.dataplane.resilience;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.weft.dataplane.authz.AuthorizationPolicy;
import dev.weft.dataplane.fuzz.Mutator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Any bytes as a policy document (issue 13, fuzzing: "the policy YAML parser"): it is either applied, and then every
 * service's authorization decides requests without an exception, or refused with a {@link PolicyDocument.PolicyException}
 * that names the file. Nothing else may escape: a sidecar parses every document stored in the registry on its policy
 * watch, and an exception there (or an Error, which ends the watch) must never come from a document.
 *
 * <p>A plain build replays the seed corpus (src/test/resources/.../PolicyDocumentFuzzTestInputs) and runs
 * {@link #seededMutationsOfTheCorpusAreAppliedOrRefused}; {@code JAZZER_FUZZ=1} fuzzes (docs/operations.md, "Fuzzing").
 */
class PolicyDocumentFuzzTest {

    @BeforeAll
    static void instrumentOnlyTheParser() {
        Mutator.instrumentOnly("dev.weft.dataplane.resilience.**:dev.weft.dataplane.authz.**:org.snakeyaml.**");
    }

    @FuzzTest(maxDuration = "4m")
    void anyDocumentIsAppliedOrRefusedWithItsReason(byte[] input) {
        String yaml = new String(input, StandardCharsets.UTF_8);
        Map<String, ServicePolicy> services;
        try {
            services = PolicyDocument.parse("p.yaml", yaml);
        } catch (PolicyDocument.PolicyException e) {
            assertThat(e.getMessage()).startsWith("p.yaml:");
            return;
        }
        for (ServicePolicy p : services.values()) {
            AuthorizationPolicy a = p.authorization();
            a.decide("web", "POST", "/admin/x");
            a.decide(null, "GET", "//admin");
            a.decide("spiffe://weft.local/service/batch", "delete", "/%61dmin?x=/..");
            a.decide("", "OPTIONS", "*");
            assertThat(a.describe()).containsKeys("default", "rules");
        }
    }

    @Test
    void seededMutationsOfTheCorpusAreAppliedOrRefused() {
        Mutator m = new Mutator(20261202, "\n :-[]{},\"'&*!#%/?".getBytes(StandardCharsets.ISO_8859_1));
        m.mutateEach(Mutator.corpus(PolicyDocumentFuzzTest.class, "anyDocumentIsAppliedOrRefusedWithItsReason"), 300,
                this::anyDocumentIsAppliedOrRefusedWithItsReason);
    }

    @Test
    void aTagSnakeyamlWillNotBuildIsRefusedAsInvalidYaml() {
        // Found by the first fuzzing run (the crash- file in the corpus): IllegalArgumentException from snakeyaml.
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", "!%0"))
                .isInstanceOf(PolicyDocument.PolicyException.class)
                .hasMessageStartingWith("p.yaml: not valid YAML: ");
    }

    @Test
    void collectionsNestedThousandsDeepAreRefusedNotAStackOverflow() {
        // Found while writing this target, by hand: snakeyaml's composer recurses once per level.
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", "services: " + "[".repeat(20_000) + "]".repeat(20_000)))
                .isInstanceOf(PolicyDocument.PolicyException.class)
                .hasMessage("p.yaml:1: expected at most 16 levels of nested mappings and lists");
        assertThatThrownBy(() -> PolicyDocument.parse("p.yaml", "services:\n  provider: " + "{a: ".repeat(5_000)))
                .isInstanceOf(PolicyDocument.PolicyException.class)
                .hasMessage("p.yaml:2: expected at most 16 levels of nested mappings and lists");
    }
}
