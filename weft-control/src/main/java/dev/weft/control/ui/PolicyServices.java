package dev.weft.control.ui;

import java.util.ArrayList;
import java.util.List;

/**
 * Which services a policy document names, for the dashboard's policies page: the keys directly under the top-level
 * {@code services:} of the YAML (docs/configuration.md). The control plane stores documents as text and does not parse
 * them (the sidecars do, and report rejections in their /config), so this is a light read of block-style YAML only;
 * a document written another way (flow style) shows no services, and its text is shown as is.
 */
final class PolicyServices {
    private static final int MAX = 256;

    private PolicyServices() {}

    static List<String> named(String yaml) {
        List<String> out = new ArrayList<>();
        boolean inServices = false;
        int indent = -1;
        for (String raw : yaml.split("\n")) {
            String line = raw.replaceAll("\\s+#.*$", "").stripTrailing();
            if (line.isBlank() || line.stripLeading().startsWith("#")) {
                continue;
            }
            int lead = line.length() - line.stripLeading().length();
            if (lead == 0) {
                inServices = line.equals("services:");
                indent = -1;
                continue;
            }
            if (!inServices) {
                continue;
            }
            if (indent < 0) {
                indent = lead;
            }
            int colon = line.indexOf(':');
            if (lead == indent && colon > lead && out.size() < MAX) {
                String key = line.substring(lead, colon).strip();
                if (key.length() >= 2 && (key.startsWith("\"") || key.startsWith("'"))) {
                    key = key.substring(1, key.length() - 1);
                }
                out.add(key);
            }
        }
        return out;
    }
}
