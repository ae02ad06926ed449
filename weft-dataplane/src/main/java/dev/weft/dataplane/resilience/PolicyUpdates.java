package dev.weft.dataplane.resilience;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The policy documents pushed through the registry: each new set is parsed whole and applied, or refused whole, and
 * what happened is kept for /config. Policies replace the defaults without a restart.
 *
 * <p>Threads: {@link #onDocuments} runs on the registry's callback thread; the status is read by the admin page.
 */
public final class PolicyUpdates {
    private final String service;
    private final Consumer<Map<String, ServicePolicy>> apply;
    private volatile String status = "defaults (no policy document applied)";
    private volatile Map<String, String> documents = Map.of();
    private final LongAdder rejections = new LongAdder();

    /**
     * @param service the local service, to name in the log line of a rejection
     * @param apply   applies policies by destination service ("*" = every service without its own)
     */
    public PolicyUpdates(String service, Consumer<Map<String, ServicePolicy>> apply) {
        this.service = service;
        this.apply = apply;
    }

    /**
     * A new set of policy documents from the registry. All are parsed first; if any is invalid the sidecar keeps the
     * policies it has (a document is applied whole or not at all) and says why in /config.
     */
    public void onDocuments(Map<String, String> next) {
        Map<String, ServicePolicy> merged = new LinkedHashMap<>();
        for (Map.Entry<String, String> d : new TreeMap<>(next).entrySet()) {
            try {
                merged.putAll(PolicyDocument.parse(d.getKey(), d.getValue()));
            } catch (PolicyDocument.PolicyException e) {
                rejections.increment();
                status = "rejected, keeping previous policies: " + e.getMessage();
                System.err.println("weft sidecar '" + service + "': policy " + status);
                return;
            }
        }
        apply.accept(merged);
        documents = Map.copyOf(next);
        status = "applied " + next.keySet();
    }

    /** What happened to the last policy documents received (applied, or rejected and why). */
    public String status() {
        return status;
    }

    /** The names of the documents in force, sorted. */
    public Set<String> documentNames() {
        return new TreeMap<>(documents).keySet();
    }

    /** Document sets refused because one of them was invalid. */
    public long rejections() {
        return rejections.sum();
    }
}
