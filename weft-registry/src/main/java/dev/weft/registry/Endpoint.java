package dev.weft.registry;

import java.util.Map;
import java.util.Objects;

/**
 * One registered instance of a service: where its sidecar's inbound (mesh) listener is, and how much it can take.
 *
 * @param service  service name, e.g. "provider"
 * @param id       instance id, unique within the service (e.g. "provider-small" or host:port)
 * @param host     address of the instance's sidecar inbound listener
 * @param port     port of that listener
 * @param weight   relative share of traffic for weighted balancing (1 when unknown)
 * @param capacity most requests the instance accepts in flight; 0 means unlimited/unknown
 * @param metadata free-form labels (zone, version...); never null
 */
public record Endpoint(String service, String id, String host, int port, int weight, int capacity,
                       Map<String, String> metadata) {
    public Endpoint {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(host, "host");
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port + " (expected 1-65535)");
        }
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be >= 1, got " + weight);
        }
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        }
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    public String address() {
        return host + ":" + port;
    }
}
