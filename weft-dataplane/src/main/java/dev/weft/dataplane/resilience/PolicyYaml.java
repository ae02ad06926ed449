package dev.weft.dataplane.resilience;

import dev.weft.dataplane.resilience.PolicyDocument.PolicyException;
import dev.weft.registry.support.Durations;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * The nodes of one policy document read as values, each refused with an error that names the file, line, key and
 * the expected form. Shared by {@link PolicyDocument} and the sections other packages own (authorization's
 * {@code authz.AuthorizationDocument}), so that every key of a document is refused in the same words.
 *
 * <p>Thread: the one reading the document (the policy watch, {@code ./weft apply}); one per document.
 */
public final class PolicyYaml {
    private final String file;

    /** @param file name used in error messages (the path given to {@code ./weft apply -f}) */
    PolicyYaml(String file) {
        this.file = file;
    }

    public Map<String, Node> mapping(Node node, String path, Set<String> allowed) throws PolicyException {
        MappingNode m = asMapping(node, path);
        Map<String, Node> out = new LinkedHashMap<>();
        for (NodeTuple t : m.getValue()) {
            String key = scalar(t.getKeyNode(), path, "a key");
            if (!allowed.contains(key)) {
                throw error(t.getKeyNode(), path + "." + key, "one of " + new TreeSet<>(allowed) + " (unknown key '" + key + "')");
            }
            if (out.put(key, t.getValueNode()) != null) {
                throw error(t.getKeyNode(), path + "." + key, "each key once (duplicate '" + key + "')");
            }
        }
        return out;
    }

    public MappingNode asMapping(Node node, String path) throws PolicyException {
        if (node instanceof MappingNode m) {
            return m;
        }
        throw error(node, path, "a mapping of keys (key: value)");
    }

    public String scalar(Node node, String path, String expected) throws PolicyException {
        if (node instanceof ScalarNode s && !s.getValue().isEmpty()) {
            return s.getValue();
        }
        throw error(node, path, expected);
    }

    public Duration duration(Node node, String path) throws PolicyException {
        String v = scalar(node, path, Durations.EXPECTED);
        try {
            return Durations.parse(v);
        } catch (IllegalArgumentException e) {
            throw error(node, path, Durations.EXPECTED + " (got '" + v.strip() + "')");
        }
    }

    public int integer(Node node, String path, int min, int max) throws PolicyException {
        String v = scalar(node, path, "a whole number");
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw error(node, path, "a whole number from " + min + " to " + max + " (got '" + v + "')");
        }
    }

    public double number(Node node, String path, double min, double max) throws PolicyException {
        String v = scalar(node, path, "a number");
        try {
            double n = Double.parseDouble(v.trim());
            if (!(n >= min && n <= max)) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw error(node, path, "a number from " + (long) min + " to " + (long) max + " (got '" + v + "')");
        }
    }

    public double percent(Node node, String path) throws PolicyException {
        String v = scalar(node, path, "a percentage such as 20%").trim();
        try {
            double p = v.endsWith("%") ? Double.parseDouble(v.substring(0, v.length() - 1)) / 100 : Double.parseDouble(v);
            if (!(p >= 0 && p <= 10)) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw error(node, path, "a percentage such as 20% (got '" + v + "')");
        }
    }

    public boolean bool(Node node, String path) throws PolicyException {
        String v = scalar(node, path, "true or false").trim().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> throw error(node, path, "true or false (got '" + v + "')");
        };
    }

    public PolicyException error(Node node, String key, String expected) {
        int line = node.getStartMark().map(Mark::getLine).orElse(-1) + 1;
        return new PolicyException(file + ":" + line + ": key '" + key + "': expected " + expected);
    }

    /**
     * A non-empty list of scalars, each checked by {@code check} (which returns the value to keep, or null to refuse
     * it). A key left out means "any"; an empty list would mean "none", which no one writes on purpose.
     */
    public List<String> list(Node node, String path, String expected,
                              UnaryOperator<String> check) throws PolicyException {
        if (!(node instanceof SequenceNode seq) || seq.getValue().isEmpty()) {
            throw error(node, path, "a non-empty list of " + expected + ", such as [a, b] (leave the key out for any)");
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < seq.getValue().size(); i++) {
            Node item = seq.getValue().get(i);
            String v = scalar(item, path + "[" + i + "]", expected);
            String kept = check.apply(v);
            if (kept == null) {
                throw error(item, path + "[" + i + "]", expected + " (got '" + v + "')");
            }
            out.add(kept);
        }
        return out;
    }
}
