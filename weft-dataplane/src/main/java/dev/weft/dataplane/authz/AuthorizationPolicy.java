package dev.weft.dataplane.authz;

import dev.weft.dataplane.exchange.ExchangeError;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A service's {@code authorization} section, compiled when the policy document is parsed (which is when it is
 * applied): its deny rules and its allow rules in two arrays, each rule's callers, path prefixes and methods in arrays
 * too, and the 403 each rule answers with made once. Deciding a request then walks arrays and compares the Strings
 * the request head already holds: nothing is allocated per request.
 *
 * <p>The order is Istio's: every deny rule first (the first that matches decides), then the allow rules (any match
 * allows), then {@code default}. Without a section every caller is allowed ({@link #NONE}).
 *
 * <p>Thread: immutable; read by every Worker, replaced whole with the service's policy.
 */
public final class AuthorizationPolicy {
    /** The name the default's denials are counted and answered under; no rule may take it. */
    public static final String DEFAULT_RULE = "default";
    /** No section: every request is allowed, and deciding one costs two empty loops. */
    public static final AuthorizationPolicy NONE = new AuthorizationPolicy(true, List.of());

    private final boolean defaultAllow;
    private final Rule[] deny;
    private final Rule[] allow;
    private final List<Rule> rules;
    private final boolean pathScoped;
    private final Rule defaultDeny;

    private AuthorizationPolicy(boolean defaultAllow, List<Rule> rules) {
        this.defaultAllow = defaultAllow;
        this.rules = List.copyOf(rules);
        this.deny = rules.stream().filter(r -> r.action == Action.DENY).toArray(Rule[]::new);
        this.allow = rules.stream().filter(r -> r.action == Action.ALLOW).toArray(Rule[]::new);
        this.pathScoped = rules.stream().anyMatch(r -> r.pathPrefixes != null);
        this.defaultDeny = defaultAllow ? null
                : new Rule(DEFAULT_RULE, Action.DENY, List.of("*"), null, null,
                "forbidden by rule default (the service's authorization policy denies what no rule allows)");
    }

    /**
     * @param defaultAllow what a request no rule matched gets
     * @param rules        in document order (names unique; the parser checks)
     */
    public static AuthorizationPolicy of(boolean defaultAllow, List<Rule> rules) {
        return new AuthorizationPolicy(defaultAllow, rules);
    }

    /**
     * Decides one request. Allocation free.
     *
     * @param caller the caller's identity ({@code x-weft-caller}: a service name or a SPIFFE ID), or null when the
     *               request has none: then only rules for any caller ({@code from: ["*"]}) and the default apply
     * @param method the method token as received
     * @param path   the request target in origin form (or {@code *})
     * @return null to let it through, or the rule that denies it (its {@link Rule#error()} is the answer)
     */
    public Rule decide(String caller, String method, String path) {
        boolean ambiguous = pathScoped && ambiguous(path);
        for (Rule r : deny) {
            if (r.matches(caller, method, path, ambiguous)) {
                return r;
            }
        }
        for (Rule r : allow) {
            if (r.matches(caller, method, path, ambiguous)) {
                return null;
            }
        }
        return defaultDeny;
    }

    /** Whether requests no rule matches are allowed. */
    public boolean defaultAllow() {
        return defaultAllow;
    }

    /** The rules in document order. */
    public List<Rule> rules() {
        return rules;
    }

    /** For /config: the default and each rule as one line. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("default", defaultAllow ? "allow" : "deny");
        List<String> lines = new ArrayList<>();
        for (Rule r : rules) {
            lines.add(r.toString());
        }
        m.put("rules", lines);
        return m;
    }

    /**
     * A path that the app may read as another than the one compared here: a percent-escape, a doubled slash, a dot
     * segment, a backslash or a ';' (a path parameter, which servlet containers drop: {@code /admin;x} is
     * {@code /admin} to them) before the query. Deny rules must not be dodged by spelling {@code /admin} as
     * {@code /%61dmin}, {@code //admin} or {@code /admin;x}, and nothing here decodes (that would allocate, and guess
     * at what the app decodes), so such a path matches every path-scoped deny rule and no path-scoped allow rule: it
     * fails closed.
     */
    public static boolean ambiguous(String path) {
        int n = path.length();
        for (int i = 0; i < n; i++) {
            char c = path.charAt(i);
            if (c == '?') {
                return false;
            }
            if (c == '%' || c == '\\' || c == ';') {
                return true;
            }
            if (c == '/' && i + 1 < n) {
                char d = path.charAt(i + 1);
                if (d == '/') {
                    return true;
                }
                if (d == '.' && dotSegment(path, i + 2)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** After "/.": the segment ends here ("/.") or after one more dot ("/.."). */
    private static boolean dotSegment(String path, int i) {
        if (i < path.length() && path.charAt(i) == '.') {
            i++;
        }
        return i == path.length() || path.charAt(i) == '/' || path.charAt(i) == '?';
    }

    /** What a matching rule does. */
    public enum Action {
        ALLOW, DENY;

        public String label() {
            return this == ALLOW ? "allow" : "deny";
        }
    }

    /**
     * One rule, compiled. Each of its three conditions holds when absent; all three must hold.
     */
    public static final class Rule {
        private static final String SPIFFE = "spiffe://";

        private final String name;
        private final Action action;
        private final boolean anyCaller;
        /** Service names as written, and their SPIFFE path "/service/NAME". */
        private final String[] services;
        private final String[] serviceSuffixes;
        /** SPIFFE IDs as written, and the service name each names. */
        private final String[] spiffeIds;
        private final String[] spiffeServices;
        /** null = any path; each ends without '/' or is "/" (see {@link #under}). */
        private final String[] pathPrefixes;
        private final String[] methods;
        private final ExchangeError error;

        /**
         * @param from         "*", service names and SPIFFE IDs ({@code spiffe://TRUST-DOMAIN/service/NAME}), as the
         *                     parser validated them; null for any caller
         * @param pathPrefixes path prefixes starting with '/', or null for any path
         * @param methods      method tokens, or null for any method
         */
        public Rule(String name, Action action, List<String> from, List<String> pathPrefixes, List<String> methods) {
            this(name, action, from, pathPrefixes, methods, "forbidden by rule " + name);
        }

        private Rule(String name, Action action, List<String> from, List<String> pathPrefixes, List<String> methods,
                     String message) {
            this.name = name;
            this.action = action;
            List<String> s = new ArrayList<>();
            List<String> ids = new ArrayList<>();
            boolean any = from == null;
            for (String f : from == null ? List.<String>of() : from) {
                if (f.equals("*")) {
                    any = true;
                } else if (f.startsWith(SPIFFE)) {
                    ids.add(f);
                } else {
                    s.add(f);
                }
            }
            this.anyCaller = any;
            this.services = s.toArray(String[]::new);
            this.serviceSuffixes = s.stream().map(n -> "/service/" + n).toArray(String[]::new);
            this.spiffeIds = ids.toArray(String[]::new);
            this.spiffeServices = ids.stream().map(id -> id.substring(id.lastIndexOf('/') + 1)).toArray(String[]::new);
            this.pathPrefixes = pathPrefixes == null ? null
                    : pathPrefixes.stream().map(p -> p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p)
                    .toArray(String[]::new);
            this.methods = methods == null ? null : methods.toArray(String[]::new);
            // Made once: the answer to every request this rule denies. Not 'unprocessed': another instance of the
            // service has the same policy, so sending the request there would only be denied again.
            this.error = new ExchangeError(403, "forbidden", message, false);
        }

        public String name() {
            return name;
        }

        public Action action() {
            return action;
        }

        /** The 403 {@code forbidden} this rule answers with; its message names the rule. */
        public ExchangeError error() {
            return error;
        }

        boolean matches(String caller, String method, String path, boolean ambiguousPath) {
            return callerMatches(caller) && methodMatches(method) && pathMatches(path, ambiguousPath);
        }

        /**
         * A service name matches a caller known by that name, or by a SPIFFE ID whose path is /service/NAME in any
         * trust domain: which trust domains a sidecar accepts is its certificate check's decision, not a rule's. A
         * SPIFFE ID matches that ID, or a caller known by its service name alone (as the receiving sidecar names
         * callers today).
         */
        private boolean callerMatches(String caller) {
            if (anyCaller) {
                return true;
            }
            if (caller == null || caller.isEmpty()) {
                return false;
            }
            boolean spiffe = caller.startsWith(SPIFFE);
            for (int i = 0; i < services.length; i++) {
                if (spiffe ? spiffeOf(caller, serviceSuffixes[i]) : caller.equals(services[i])) {
                    return true;
                }
            }
            for (int i = 0; i < spiffeIds.length; i++) {
                if (spiffe ? caller.equals(spiffeIds[i]) : caller.equals(spiffeServices[i])) {
                    return true;
                }
            }
            return false;
        }

        /** {@code spiffe://TD/service/NAME} with {@code suffix} "/service/NAME" and no other '/' after the scheme. */
        private static boolean spiffeOf(String id, String suffix) {
            return id.endsWith(suffix) && id.indexOf('/', SPIFFE.length()) == id.length() - suffix.length();
        }

        /** Methods are compared ignoring case, so that "delete" cannot slip past a rule for DELETE. */
        private boolean methodMatches(String method) {
            if (methods == null) {
                return true;
            }
            for (String m : methods) {
                if (m.equalsIgnoreCase(method)) {
                    return true;
                }
            }
            return false;
        }

        private boolean pathMatches(String path, boolean ambiguousPath) {
            if (pathPrefixes == null) {
                return true;
            }
            if (ambiguousPath) {
                return action == Action.DENY;
            }
            for (String p : pathPrefixes) {
                if (under(path, p)) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Whole segments: {@code /admin} covers /admin, /admin/users and /admin?x, not /administrator. "/" covers
         * every path.
         */
        static boolean under(String path, String prefix) {
            if (!path.startsWith(prefix)) {
                return false;
            }
            int n = prefix.length();
            if (n == path.length() || prefix.equals("/")) {
                return true;
            }
            char c = path.charAt(n);
            return c == '/' || c == '?';
        }

        /** One line for /config: {@code NAME: deny from [web] paths [/admin] methods [POST]}. */
        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(name).append(": ").append(action.label()).append(" from ");
            if (anyCaller) {
                b.append("[*]");
            } else {
                List<String> all = new ArrayList<>(List.of(services));
                all.addAll(List.of(spiffeIds));
                b.append(all);
            }
            if (pathPrefixes != null) {
                b.append(" paths ").append(List.of(pathPrefixes));
            }
            if (methods != null) {
                b.append(" methods ").append(List.of(methods));
            }
            return b.toString();
        }
    }
}
