package dev.weft.dataplane.balancing;

import java.util.List;

/**
 * Chooses an endpoint for one request. One instance per Worker event loop (as Envoy keeps one load balancer per
 * worker), so an implementation's own state needs no synchronisation; only {@link EndpointState} is shared.
 *
 * <p>Implementations must take the slot with {@link EndpointState#tryAcquire()} and return only an endpoint whose
 * slot they took, or null when every endpoint is at capacity.
 */
public interface Balancer {

    /** @param endpoints the cluster's current endpoints (same list instance until the endpoint set changes) */
    EndpointState pick(List<EndpointState> endpoints);

    /** Creates one balancer per Worker. */
    interface Factory {
        String name();

        Balancer create();
    }

    static Factory named(String name) {
        return switch (name) {
            case "round-robin" -> new Factory() {
                public String name() {
                    return "round-robin";
                }

                public Balancer create() {
                    return new RoundRobinBalancer();
                }
            };
            case "weighted-round-robin" -> new Factory() {
                public String name() {
                    return "weighted-round-robin";
                }

                public Balancer create() {
                    return new WeightedRoundRobinBalancer();
                }
            };
            default -> throw new IllegalArgumentException(
                    "unknown balancer '" + name + "' (expected: round-robin, weighted-round-robin)");
        };
    }
}
