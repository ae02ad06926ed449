package dev.weft.control.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the Prometheus text exposition format (what every sidecar serves at /metrics) into samples. Public for the
 * bench, which reads the sidecars' /metrics the same way ({@code weft-bench}'s {@code SidecarScrape}).
 */
public final class PromText {
    private PromText() {}

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String key) {
            return labels.getOrDefault(key, "");
        }
    }

    public static List<Sample> parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Sample s = parseLine(line);
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    /** {@code name{a="x",b="y"} value [timestamp]}; null for a line that is not a sample. */
    public static Sample parseLine(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (i < line.length() && line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                    return null;
                }
                String key = line.substring(i, eq).strip();
                StringBuilder v = new StringBuilder();
                int j = eq + 2;
                while (j < line.length() && line.charAt(j) != '"') {
                    char c = line.charAt(j);
                    if (c == '\\' && j + 1 < line.length()) {
                        char n = line.charAt(++j);
                        v.append(n == 'n' ? '\n' : n);
                    } else {
                        v.append(c);
                    }
                    j++;
                }
                labels.put(key, v.toString());
                i = j + 1;
                if (i < line.length() && line.charAt(i) == ',') {
                    i++;
                }
            }
            i++;
        }
        String rest = line.substring(Math.min(i, line.length())).strip();
        int space = rest.indexOf(' ');
        String value = space < 0 ? rest : rest.substring(0, space);
        try {
            return new Sample(name, labels, switch (value) {
                case "+Inf" -> Double.POSITIVE_INFINITY;
                case "-Inf" -> Double.NEGATIVE_INFINITY;
                case "NaN" -> Double.NaN;
                default -> Double.parseDouble(value);
            });
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
