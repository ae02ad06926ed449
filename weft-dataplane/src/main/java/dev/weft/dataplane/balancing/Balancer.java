package dev.weft.dataplane.balancing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;

/**
 * Chooses an endpoint for one request. One instance per Worker event loop (as Envoy keeps one load balancer per
 * worker), so an implementation's own state needs no synchronisation; only {@link EndpointState} is shared.
 *
 * <p>Implementations must take the slot with {@link EndpointState#tryAcquire()} and return only an endpoint whose
 * slot they took, or null when every endpoint is at capacity. They must never return {@code exclude}: that is how
 * a retry goes to a different endpoint whichever balancer is configured ({@link Cluster} falls back to the excluded
 * endpoint itself only when it is the one left with room).
 */
public interface Balancer {

    /**
     * @param endpoints the cluster's current endpoints (same list instance until the endpoint set changes)
     * @param hash      the request's hash key for {@code ring-hash}; 0 for other balancers
     * @param exclude   an endpoint not to choose (the one a retried request just failed at); null for none
     */
    EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude);

    /** A pick with nothing excluded: a request's first attempt. */
    default EndpointState pick(List<EndpointState> endpoints, long hash) {
        return pick(endpoints, hash, null);
    }

    /** Creates one balancer per Worker. */
    interface Factory {
        /** The configured name, e.g. {@code p2c-peak-ewma} or {@code ring-hash:x-user-id}. */
        String name();

        Balancer create();

        /** For ring-hash: the request header whose value is hashed; null otherwise. */
        default String hashHeader() {
            return null;
        }
    }

    /** The default: adapts to latency and load with no configuration. */
    String DEFAULT = "p2c-peak-ewma";

    /**
     * Parses a balancer name: {@code p2c-peak-ewma} (default), {@code least-request}, {@code round-robin},
     * {@code weighted-round-robin}, or {@code ring-hash:HEADER}.
     */
    static Factory named(String name) {
        return switch (name) {
            case "p2c-peak-ewma" -> factory(name, P2cPeakEwmaBalancer::new, null);
            case "least-request" -> factory(name, LeastRequestBalancer::new, null);
            case "round-robin" -> factory(name, RoundRobinBalancer::new, null);
            case "weighted-round-robin" -> factory(name, WeightedRoundRobinBalancer::new, null);
            default -> {
                if (name.startsWith("ring-hash:") && name.length() > "ring-hash:".length()) {
                    yield factory(name, RingHashBalancer::new, name.substring("ring-hash:".length()).toLowerCase(java.util.Locale.ROOT));
                }
                throw new IllegalArgumentException("unknown balancer '" + name + "' (expected: p2c-peak-ewma, "
                        + "least-request, round-robin, weighted-round-robin, ring-hash:HEADER)");
            }
        };
    }

    /** The hash key of a header value for ring-hash (stable across processes). */
    static long hashOf(String value) {
        return value == null ? 0 : RingHashBalancer.fnv(value.getBytes(StandardCharsets.UTF_8));
    }

    private static Factory factory(String name, Supplier<Balancer> supplier, String header) {
        return new Factory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Balancer create() {
                return supplier.get();
            }

            @Override
            public String hashHeader() {
                return header;
            }
        };
    }
}
