package dev.weft.dataplane.authz;

import dev.weft.dataplane.authz.AuthorizationPolicy.Action;
import dev.weft.dataplane.authz.AuthorizationPolicy.Rule;
import dev.weft.dataplane.resilience.PolicyDocument.PolicyException;
import dev.weft.dataplane.resilience.PolicyYaml;
import dev.weft.registry.ServiceNames;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a service's {@code authorization} section of a policy document (docs/security.md, "Authorization") into an
 * {@link AuthorizationPolicy}: who may call the service, by caller, path prefix and method. The document's other
 * keys are {@code resilience.PolicyDocument}'s, which hands this section over; both refuse in the same words
 * through {@link PolicyYaml}.
 *
 * <pre>
 * authorization:           # inbound, at the service's own sidecars; absent = every caller allowed
 *   default: deny
 *   rules:
 *     - {name: no-admin-from-web, action: deny, from: [web], paths: [/admin], methods: [POST, DELETE]}
 *     - {name: consumers-read, action: allow, from: [consumer], methods: [GET]}
 * </pre>
 *
 * <p>Thread: the one reading the document; one per section.
 */
public final class AuthorizationDocument {
    private static final Pattern RULE_NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
    private static final Pattern METHOD = Pattern.compile("[A-Za-z][A-Za-z-]{0,31}");
    /** spiffe://TRUST-DOMAIN/service/NAME, the form the control plane's CA issues (docs/security.md). */
    private static final Pattern SPIFFE_ID =
            Pattern.compile("spiffe://[a-z0-9._-]{1,255}/service/([A-Za-z0-9][A-Za-z0-9._-]*)");
    /** A path prefix: origin form in visible ASCII without the query, and nothing {@code AuthorizationPolicy} would call ambiguous. */
    private static final Pattern PATH_PREFIX = Pattern.compile("/[\\x21-\\x7e&&[^?#]]{0,1023}");

    private final PolicyYaml yaml;

    private AuthorizationDocument(PolicyYaml yaml) {
        this.yaml = yaml;
    }

    /**
     * Reads a service's {@code authorization} section.
     *
     * @param path the section's key in the document ({@code services.NAME.authorization}), for error messages
     */
    public static AuthorizationPolicy parse(PolicyYaml yaml, Node node, String path) throws PolicyException {
        return new AuthorizationDocument(yaml).authorization(node, path);
    }

    private AuthorizationPolicy authorization(Node node, String path) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("default", "rules"));
        boolean defaultAllow = !k.containsKey("default") || action(k.get("default"), path + ".default")
                == Action.ALLOW;
        List<Rule> rules = new ArrayList<>();
        if (k.containsKey("rules")) {
            Node rn = k.get("rules");
            if (!(rn instanceof SequenceNode seq)) {
                throw yaml.error(rn, path + ".rules", "a list of rules (- name: ..., action: allow|deny, from: [...])");
            }
            Set<String> names = new HashSet<>();
            for (int i = 0; i < seq.getValue().size(); i++) {
                String rp = path + ".rules[" + i + "]";
                Node r = seq.getValue().get(i);
                Rule rule = authzRule(rp, r);
                if (!names.add(rule.name())) {
                    throw yaml.error(r, rp + ".name", "a rule name used once in the service (duplicate '" + rule.name() + "')");
                }
                rules.add(rule);
            }
        }
        return AuthorizationPolicy.of(defaultAllow, rules);
    }

    private Rule authzRule(String path, Node node) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("name", "action", "from", "paths", "methods"));
        String nameExpected = "a rule name of lower-case letters, digits, '.', '_', '-' (at most 63; it labels "
                + "weft_authz_denied_total), not '" + AuthorizationPolicy.DEFAULT_RULE + "'";
        if (!k.containsKey("name")) {
            throw yaml.error(node, path + ".name", nameExpected);
        }
        String name = yaml.scalar(k.get("name"), path + ".name", nameExpected);
        if (!RULE_NAME.matcher(name).matches() || name.equals(AuthorizationPolicy.DEFAULT_RULE)) {
            throw yaml.error(k.get("name"), path + ".name", nameExpected + " (got '" + name + "')");
        }
        if (!k.containsKey("action")) {
            throw yaml.error(node, path + ".action", "allow or deny");
        }
        Action action = action(k.get("action"), path + ".action");
        List<String> from = k.containsKey("from") ? yaml.list(k.get("from"), path + ".from",
                "\"*\", a service name or spiffe://TRUST-DOMAIN/service/NAME", AuthorizationDocument::caller) : null;
        List<String> paths = k.containsKey("paths") ? yaml.list(k.get("paths"), path + ".paths",
                "a path prefix starting with / (no query, '%', ';', '\\', '//', '.' or '..' segment)",
                v -> PATH_PREFIX.matcher(v).matches() && !AuthorizationPolicy.ambiguous(v) ? v : null) : null;
        List<String> methods = k.containsKey("methods") ? yaml.list(k.get("methods"), path + ".methods",
                "an HTTP method such as GET", v -> METHOD.matcher(v).matches() ? v.toUpperCase(Locale.ROOT) : null) : null;
        return new Rule(name, action, from, paths, methods);
    }

    /** A caller as a rule names it: "*", a service name, or a SPIFFE ID naming a service; null if none of these. */
    private static String caller(String v) {
        if (v.equals("*") || ServiceNames.isValid(v)) {
            return v;
        }
        var m = SPIFFE_ID.matcher(v);
        return m.matches() && ServiceNames.isValid(m.group(1)) ? v : null;
    }

    private Action action(Node node, String path) throws PolicyException {
        String v = yaml.scalar(node, path, "allow or deny");
        return switch (v) {
            case "allow" -> Action.ALLOW;
            case "deny" -> Action.DENY;
            default -> throw yaml.error(node, path, "allow or deny (got '" + v + "')");
        };
    }
}
