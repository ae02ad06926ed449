package dev.weft.dataplane.outbound;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Maps a destination service name to its {@link Cluster}, starting a registry watch the first time a name is
 * used. Services named by {@code --upstream} are {@linkplain #pin pinned}: watched from the start, for the sidecar's
 * life. Others are watched on the first request whose Host names them, and {@linkplain #expireIdle expire} once
 * they have served nothing for a while, so that the Host values callers happen to send do not keep a watch each
 * forever. The number of clusters is capped as well, so that arbitrary Host values cannot grow memory.
 *
 * <p>Threads: lookups from any Worker (a concurrent map); watch callbacks on the registry's thread;
 * {@link #expireIdle} on one scheduler thread (the Manager loop).
 */
public final class Router implements AutoCloseable {
    /** How often {@link #expireIdle} runs: a destination named only by Host lives 5 to 10 minutes after its last use. */
    public static final Duration IDLE_AFTER = Duration.ofMinutes(5);
    private final Registry registry;
    private final Balancer.Factory balancer;
    private final int maxQueue;
    private final Duration queueTimeout;
    private final int maxClusters;
    private final Map<String, Cluster> clusters = new ConcurrentHashMap<>();
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();
    private final Set<String> pinned = ConcurrentHashMap.newKeySet();
    private final LongAdder expired = new LongAdder();
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
            watches.put(s, registry.watch(s, (svc, endpoints) -> created.update(endpoints)));
            return created;
        });
    }

    /** The cluster of a service this sidecar is configured to call ({@code --upstream}): watched now, never expired. */
    public Cluster pin(String service) {
        pinned.add(service);
        return cluster(service);
    }

    /**
     * Drops the clusters, and closes the registry watches, of services that are not pinned and served no request
     * since the previous call, with nothing in flight or queued; returns how many. Called every
     * {@code idleAfter}, so a cluster lives between one and two periods after its last request. A request that
     * found the cluster just before it was dropped still completes on it; the next one makes a new one, which waits
     * for the registry's first snapshot like any first request.
     */
    public int expireIdle() {
        int n = 0;
        for (Cluster c : clusters.values()) {
            if (pinned.contains(c.service()) || !c.idleSinceLastCheck()) {
                continue;
            }
            if (clusters.remove(c.service(), c)) {
                Watch w = watches.remove(c.service());
                if (w != null) {
                    w.close();
                }
                n++;
            }
        }
        expired.add(n);
        return n;
    }

    /** Clusters dropped by {@link #expireIdle} so far. */
    public long expiredClusters() {
        return expired.sum();
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
        watches.values().forEach(Watch::close);
    }
}
