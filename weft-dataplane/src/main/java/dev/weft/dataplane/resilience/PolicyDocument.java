package dev.weft.dataplane.resilience;

import dev.weft.dataplane.authz.AuthorizationDocument;
import dev.weft.dataplane.authz.AuthorizationPolicy;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.api.lowlevel.Parse;
import org.snakeyaml.engine.v2.events.CollectionEndEvent;
import org.snakeyaml.engine.v2.events.CollectionStartEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads a policy file (YAML, written by hand) into one {@link ServicePolicy} per service. The whole document is
 * refused at the first mistake, with the file, line, key and the expected form, because a half-applied policy is
 * worse than none. Keys use dashes; every key is optional and has the default of {@link ServicePolicy#DEFAULT}.
 * docs/configuration.md lists them all. The {@code authorization} section is authorization's own
 * ({@link AuthorizationDocument}); the values of both are read by {@link PolicyYaml}.
 *
 * <pre>
 * services:
 *   provider:                 # or "*" for every service without its own entry
 *     timeout: 2s
 *     retries: {attempts: 3, budget: 20%, min-per-second: 10, on-5xx: true}
 *     outlier-detection: {consecutive-failures: 5, base-ejection: 5s, max-ejection: 60s, max-ejected-percent: 50}
 *     rate-limit: {requests-per-second: 1000, burst: 100, per-caller: 200}
 *     concurrency-limit: {adaptive: true, min: 10, max: 200}   # inbound, at the service's own sidecars; default fixed
 *     circuit-breaker: {max-connections: 1024}
 *     outbound-limit: {adaptive: true, min: 200, max: 1000}  # at the callers' sidecars; default on, no min
 *     slo: {p99: 200ms, error-rate: 1%}   # read by ./weft diagnose; no sidecar enforces it
 *     routes:
 *       - name: search
 *         match: {path-prefix: /search, method: GET}
 *         timeout: 500ms
 *     authorization:           # inbound, at the service's own sidecars; absent = every caller allowed
 *       default: deny
 *       rules:
 *         - {name: no-admin-from-web, action: deny, from: [web], paths: [/admin], methods: [POST, DELETE]}
 *         - {name: consumers-read, action: allow, from: [consumer], methods: [GET]}
 * </pre>
 */
public final class PolicyDocument {
    private static final Set<String> SERVICE_KEYS = Set.of("timeout", "retries", "outlier-detection", "rate-limit", "routes",
            "concurrency-limit", "circuit-breaker", "outbound-limit", "authorization", "slo");
    private static final Set<String> ROUTE_KEYS = Set.of("name", "match", "timeout", "retries", "rate-limit");

    private final String file;
    private final PolicyYaml yaml;

    private PolicyDocument(String file) {
        this.file = file;
        this.yaml = new PolicyYaml(file);
    }

    /**
     * @param file name used in error messages (the path given to {@code ./weft apply -f})
     * @throws PolicyException naming file, line, key and what was expected
     */
    public static Map<String, ServicePolicy> parse(String file, String yaml) throws PolicyException {
        return new PolicyDocument(file).parse(yaml);
    }

    private Map<String, ServicePolicy> parse(String text) throws PolicyException {
        Node root;
        try {
            LoadSettings settings = LoadSettings.builder().setLabel(file).build();
            checkDepth(settings, text);
            root = new Compose(settings).composeString(text).orElse(null);
        } catch (YamlEngineException | IllegalArgumentException e) {
            // snakeyaml-engine refuses some malformed input outside its own exception type: a tag such as "!%0"
            // decodes to one it will not build a Tag from (IllegalArgumentException; found by PolicyDocumentFuzzTest).
            throw new PolicyException(file + ": not valid YAML: " + String.valueOf(e.getMessage()).replace('\n', ' '));
        }
        if (root == null) {
            throw new PolicyException(file + ": empty policy document (expected a 'services:' mapping)");
        }
        Map<String, Node> top = yaml.mapping(root, "the document", Set.of("services"));
        Node services = top.get("services");
        if (services == null) {
            throw yaml.error(root, "services", "a 'services:' mapping of service name to policy");
        }
        Map<String, ServicePolicy> out = new LinkedHashMap<>();
        MappingNode m = yaml.asMapping(services, "services");
        for (NodeTuple t : m.getValue()) {
            String name = yaml.scalar(t.getKeyNode(), "services", "a service name");
            if (!name.equals("*") && !name.matches("[a-z0-9][a-z0-9._-]*")) {
                throw yaml.error(t.getKeyNode(), "services." + name, "a service name of lower-case letters, digits, '.', '_', '-', or '*'");
            }
            out.put(name, service("services." + name, t.getValueNode()));
        }
        return out;
    }

    /** Deeper than any policy document needs (services, a service, authorization, rules, a rule, from: 6). */
    static final int MAX_DEPTH = 16;

    /**
     * Refuses collections nested deeper than {@link #MAX_DEPTH} before the document is composed: snakeyaml's composer
     * recurses once per level, so a few thousand {@code [} overflow the stack, and a StackOverflowError would end
     * the sidecar's policy watch rather than refuse one document (found while writing PolicyDocumentFuzzTest). The parser's
     * events come from a state machine, not recursion, so counting them is safe at any depth.
     */
    private void checkDepth(LoadSettings settings, String text) throws PolicyException {
        int depth = 0;
        for (Event e : new Parse(settings).parseString(text)) {
            if (e instanceof CollectionStartEvent) {
                if (++depth > MAX_DEPTH) {
                    int line = e.getStartMark().map(Mark::getLine).orElse(-1) + 1;
                    throw new PolicyException(file + ":" + line + ": expected at most " + MAX_DEPTH
                            + " levels of nested mappings and lists");
                }
            } else if (e instanceof CollectionEndEvent) {
                depth--;
            }
        }
    }

    private ServicePolicy service(String path, Node node) throws PolicyException {
        Map<String, Node> keys = yaml.mapping(node, path, SERVICE_KEYS);
        ServicePolicy d = ServicePolicy.DEFAULT;
        Duration timeout = keys.containsKey("timeout") ? yaml.duration(keys.get("timeout"), path + ".timeout") : d.timeout();
        ServicePolicy.RetryPolicy retry = keys.containsKey("retries") ? retries(keys.get("retries"), path + ".retries", d.retry()) : d.retry();
        ServicePolicy.OutlierPolicy outlier = keys.containsKey("outlier-detection")
                ? outlier(keys.get("outlier-detection"), path + ".outlier-detection") : d.outlier();
        double[] rate = keys.containsKey("rate-limit") ? rate(keys.get("rate-limit"), path + ".rate-limit") : new double[] {0, 0, 0};
        ServicePolicy.ConcurrencyLimit limit = keys.containsKey("concurrency-limit")
                ? concurrencyLimit(keys.get("concurrency-limit"), path + ".concurrency-limit", d.concurrencyLimit(),
                "--capacity")
                : d.concurrencyLimit();
        ServicePolicy.ConcurrencyLimit outboundLimit = keys.containsKey("outbound-limit")
                ? concurrencyLimit(keys.get("outbound-limit"), path + ".outbound-limit", d.outboundLimit(),
                "the default (1000)")
                : d.outboundLimit();
        int maxConnections = keys.containsKey("circuit-breaker")
                ? circuitBreaker(keys.get("circuit-breaker"), path + ".circuit-breaker") : d.maxConnections();
        AuthorizationPolicy authz = keys.containsKey("authorization")
                ? AuthorizationDocument.parse(yaml, keys.get("authorization"), path + ".authorization") : AuthorizationPolicy.NONE;
        ServicePolicy.Slo slo = keys.containsKey("slo") ? slo(keys.get("slo"), path + ".slo") : null;
        ServicePolicy base = new ServicePolicy(timeout, retry, outlier, rate[0], (int) rate[1], rate[2], List.of(),
                limit, maxConnections, outboundLimit, authz, slo);
        if (!keys.containsKey("routes")) {
            return base;
        }
        List<ServicePolicy.Route> routes = new ArrayList<>();
        Node rn = keys.get("routes");
        if (!(rn instanceof SequenceNode seq)) {
            throw yaml.error(rn, path + ".routes", "a list of routes (- name: ..., match: {...})");
        }
        for (int i = 0; i < seq.getValue().size(); i++) {
            routes.add(route(path + ".routes[" + i + "]", seq.getValue().get(i), base));
        }
        return new ServicePolicy(timeout, retry, outlier, rate[0], (int) rate[1], rate[2], routes, limit,
                maxConnections, outboundLimit, authz, slo);
    }

    /**
     * {@code concurrency-limit} (inbound) and {@code outbound-limit}: the same keys, their own defaults.
     *
     * @param maxZero what a max of 0 stands for, as the error message says it
     */
    private ServicePolicy.ConcurrencyLimit concurrencyLimit(Node node, String path, ServicePolicy.ConcurrencyLimit d,
                                                            String maxZero) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("adaptive", "min", "max", "initial"));
        boolean adaptive = k.containsKey("adaptive") ? yaml.bool(k.get("adaptive"), path + ".adaptive") : d.adaptive();
        int min = k.containsKey("min") ? yaml.integer(k.get("min"), path + ".min", 1, 100_000) : d.min();
        int max = k.containsKey("max") ? yaml.integer(k.get("max"), path + ".max", 0, 100_000) : d.max();
        int initial = k.containsKey("initial") ? yaml.integer(k.get("initial"), path + ".initial", 0, 100_000) : d.initial();
        if (max != 0 && max < min) {
            throw yaml.error(k.get("max"), path + ".max", "a maximum of at least min (" + min + "), or 0 for " + maxZero);
        }
        return new ServicePolicy.ConcurrencyLimit(adaptive, min, max, initial);
    }

    /** {@code slo: {p99: 200ms, error-rate: 1%}}: at least one of the two; a p99 above zero, a rate of 0-100%. */
    private ServicePolicy.Slo slo(Node node, String path) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("p99", "error-rate"));
        if (k.isEmpty()) {
            throw yaml.error(node, path, "p99 and/or error-rate, e.g. {p99: 200ms, error-rate: 1%}");
        }
        Duration p99 = null;
        if (k.containsKey("p99")) {
            p99 = yaml.duration(k.get("p99"), path + ".p99");
            if (p99.isZero()) {
                throw yaml.error(k.get("p99"), path + ".p99", "a latency above zero, such as 200ms");
            }
        }
        Double rate = null;
        if (k.containsKey("error-rate")) {
            rate = yaml.percent(k.get("error-rate"), path + ".error-rate");
            if (rate > 1) {
                throw yaml.error(k.get("error-rate"), path + ".error-rate", "a percentage from 0% to 100%, such as 1%");
            }
        }
        return new ServicePolicy.Slo(p99, rate);
    }

    private int circuitBreaker(Node node, String path) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("max-connections"));
        return k.containsKey("max-connections")
                ? yaml.integer(k.get("max-connections"), path + ".max-connections", 0, 1_000_000)
                : ServicePolicy.DEFAULT_MAX_CONNECTIONS;
    }

    private ServicePolicy.Route route(String path, Node node, ServicePolicy base) throws PolicyException {
        Map<String, Node> keys = yaml.mapping(node, path, ROUTE_KEYS);
        if (!keys.containsKey("name")) {
            throw yaml.error(node, path + ".name", "a route name (it labels the route's metrics)");
        }
        String name = yaml.scalar(keys.get("name"), path + ".name", "a route name");
        String prefix = null;
        String method = null;
        if (keys.containsKey("match")) {
            Map<String, Node> match = yaml.mapping(keys.get("match"), path + ".match", Set.of("path-prefix", "method"));
            if (match.containsKey("path-prefix")) {
                prefix = yaml.scalar(match.get("path-prefix"), path + ".match.path-prefix", "a path starting with /");
                if (!prefix.startsWith("/")) {
                    throw yaml.error(match.get("path-prefix"), path + ".match.path-prefix", "a path starting with /");
                }
            }
            if (match.containsKey("method")) {
                method = yaml.scalar(match.get("method"), path + ".match.method", "an HTTP method such as GET").toUpperCase(Locale.ROOT);
            }
        }
        Duration timeout = keys.containsKey("timeout") ? yaml.duration(keys.get("timeout"), path + ".timeout") : base.timeout();
        ServicePolicy.RetryPolicy retry = keys.containsKey("retries") ? retries(keys.get("retries"), path + ".retries", base.retry()) : base.retry();
        double[] rate = keys.containsKey("rate-limit") ? rate(keys.get("rate-limit"), path + ".rate-limit")
                : new double[] {0, 0, 0};
        ServicePolicy merged = new ServicePolicy(timeout, retry, base.outlier(), rate[0], (int) rate[1], rate[2],
                List.of(), base.concurrencyLimit(), base.maxConnections(), base.outboundLimit(), base.authorization(),
                base.slo());
        return new ServicePolicy.Route(name, prefix, method, merged);
    }

    private ServicePolicy.RetryPolicy retries(Node node, String path, ServicePolicy.RetryPolicy d) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("attempts", "budget", "min-per-second", "on-5xx"));
        int attempts = k.containsKey("attempts") ? yaml.integer(k.get("attempts"), path + ".attempts", 1, 10) : d.attempts();
        double budget = k.containsKey("budget") ? yaml.percent(k.get("budget"), path + ".budget") : d.budgetRatio();
        double min = k.containsKey("min-per-second") ? yaml.number(k.get("min-per-second"), path + ".min-per-second", 0, 1e6) : d.minPerSecond();
        boolean on5xx = k.containsKey("on-5xx") ? yaml.bool(k.get("on-5xx"), path + ".on-5xx") : d.retryOn5xx();
        return new ServicePolicy.RetryPolicy(attempts, budget, min, on5xx);
    }

    private ServicePolicy.OutlierPolicy outlier(Node node, String path) throws PolicyException {
        ServicePolicy.OutlierPolicy d = ServicePolicy.OutlierPolicy.DEFAULT;
        Map<String, Node> k = yaml.mapping(node, path, Set.of("consecutive-failures", "base-ejection", "max-ejection", "max-ejected-percent"));
        return new ServicePolicy.OutlierPolicy(
                k.containsKey("consecutive-failures") ? yaml.integer(k.get("consecutive-failures"), path + ".consecutive-failures", 0, 1000) : d.consecutiveFailures(),
                k.containsKey("base-ejection") ? yaml.duration(k.get("base-ejection"), path + ".base-ejection") : d.baseEjection(),
                k.containsKey("max-ejection") ? yaml.duration(k.get("max-ejection"), path + ".max-ejection") : d.maxEjection(),
                k.containsKey("max-ejected-percent") ? yaml.integer(k.get("max-ejected-percent"), path + ".max-ejected-percent", 0, 100) : d.maxEjectedPercent());
    }

    /** @return {requests-per-second, burst, per-caller} */
    private double[] rate(Node node, String path) throws PolicyException {
        Map<String, Node> k = yaml.mapping(node, path, Set.of("requests-per-second", "burst", "per-caller"));
        double rps = k.containsKey("requests-per-second") ? yaml.number(k.get("requests-per-second"), path + ".requests-per-second", 0, 1e9) : 0;
        // Without a burst, each bucket takes a tenth of its own rate (ServicePolicy.burstFor), the per-caller one too.
        double burst = k.containsKey("burst") ? yaml.integer(k.get("burst"), path + ".burst", 1, 1_000_000) : 0;
        double perCaller = k.containsKey("per-caller") ? yaml.number(k.get("per-caller"), path + ".per-caller", 0, 1e9) : 0;
        return new double[] {rps, burst, perCaller};
    }

    /** A refused policy document; the message names file, line, key and the expected form. */
    public static final class PolicyException extends Exception {
        public PolicyException(String message) {
            super(message, null, false, false);
        }
    }
}
