package dev.weft.control.diagnose;

import dev.weft.registry.support.Durations;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * The SLOs in the stored policy documents: {@code services.NAME.slo: {p99: 200ms, error-rate: 1%}} (NAME may be
 * {@code *}, for every service without its own). The documents were validated by the data plane's parser
 * ({@code PolicyDocument}) before {@code ./weft apply} stored them, so this only reads; a part it cannot read is
 * left out (the default rule applies to it) rather than failing the diagnosis. When several documents name a
 * service, the last by document name wins.
 *
 * <p>Threads: any.
 */
final class Slos {
    private Slos() {}

    static Map<String, Slo> read(Map<String, String> documents) {
        Map<String, Slo> out = new TreeMap<>();
        for (String doc : new TreeMap<>(documents).values()) {
            Object root;
            try {
                root = new Load(LoadSettings.builder().build()).loadFromString(doc);
            } catch (RuntimeException e) {
                continue; // validated when applied; unreadable now means nothing to read
            }
            if (!(root instanceof Map<?, ?> top) || !(top.get("services") instanceof Map<?, ?> services)) {
                continue;
            }
            services.forEach((name, policy) -> {
                if (policy instanceof Map<?, ?> m && m.get("slo") instanceof Map<?, ?> slo) {
                    Slo s = new Slo(duration(slo.get("p99")), fraction(slo.get("error-rate")));
                    if (s.p99() != null || s.errorRate() != null) {
                        out.put(String.valueOf(name), s);
                    }
                }
            });
        }
        return out;
    }

    private static Duration duration(Object v) {
        try {
            return v == null ? null : Durations.parse(String.valueOf(v));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** "1%" or 0.01. */
    private static Double fraction(Object v) {
        if (v == null) {
            return null;
        }
        String s = String.valueOf(v).trim();
        try {
            double d = s.endsWith("%") ? Double.parseDouble(s.substring(0, s.length() - 1)) / 100 : Double.parseDouble(s);
            return d >= 0 && d <= 1 ? d : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
