package dev.weft.dataplane.outbound;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Maps a destination service name to its {@link Cluster}, starting a registry watch the first time a name is
 * used. Services named by {@code --upstream} are watched from the start; others are watched on the first request
 * whose Host names them. The number of clusters is capped so that arbitrary Host values cannot grow memory.
 *
 * <p>Threads: lookups from any Worker (a concurrent map); watch callbacks on the registry's thread.
 */
public final class Router implements AutoCloseable {
    private final Registry registry;
    private final Balancer.Factory balancer;
    private final int maxQueue;
    private final Duration queueTimeout;
    private final int maxClusters;
    private final Map<String, Cluster> clusters = new ConcurrentHashMap<>();
    private final List<Watch> watches = new CopyOnWriteArrayList<>();
    private volatile Map<String, ServicePolicy> policies = Map.of();

    public Router(Registry registry, Balancer.Factory balancer, int maxQueue, Duration queueTimeout, int maxClusters) {
        this.registry = registry;
        this.balancer = balancer;
        this.maxQueue = maxQueue;
        this.queueTimeout = queueTimeout;
        this.maxClusters = maxClusters;
    }

    /** The cluster for a service, or null if the cap on distinct destinations is reached. */
    public Cluster cluster(String service) {
        Cluster c = clusters.get(service);
        if (c != null) {
            return c;
        }
        if (clusters.size() >= maxClusters) {
            return null;
        }
        return clusters.computeIfAbsent(service, s -> {
            Cluster created = new Cluster(s, balancer, maxQueue, queueTimeout);
            created.policy(policyFor(s));
            watches.add(registry.watch(s, (svc, endpoints) -> created.update(endpoints)));
            return created;
        });
    }

    /** The policy for a service: its own if one was applied, else the default. */
    public ServicePolicy policyFor(String service) {
        return policies.getOrDefault(service, policies.getOrDefault("*", ServicePolicy.DEFAULT));
    }

    /**
     * Replaces all policies (a new document from the registry) and applies them to every known cluster at once.
     * Requests in flight finish under the policy they started with; no connection is touched.
     */
    public void applyPolicies(Map<String, ServicePolicy> next) {
        policies = Map.copyOf(next);
        for (Cluster c : clusters.values()) {
            c.policy(policyFor(c.service()));
        }
    }

    public Collection<Cluster> clusters() {
        return clusters.values();
    }

    public String balancerName() {
        return balancer.name();
    }

    @Override
    public void close() {
        watches.forEach(Watch::close);
    }
}
