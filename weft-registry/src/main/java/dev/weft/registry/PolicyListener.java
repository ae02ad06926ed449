package dev.weft.registry;

import java.util.Map;

/** Receives every stored policy document (name → YAML text) after each change. */
@FunctionalInterface
public interface PolicyListener {
    void onPolicies(Map<String, String> documents);
}
