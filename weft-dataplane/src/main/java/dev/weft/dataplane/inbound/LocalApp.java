package dev.weft.dataplane.inbound;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.dataplane.transport.Transport;
import dev.weft.dataplane.upstream.HttpUpstream;
import dev.weft.registry.Endpoint;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The local app as the inbound side sees it: a one-endpoint {@link Cluster}, so that the same admission code
 * (capacity and bounded queue) that protects remote endpoints keeps the app under {@code --capacity}, and the
 * concurrency limit in front of it, and the keep-alive connections to it.
 *
 * <p>Threads: built on the sidecar's start thread; {@link #policy} runs on whichever thread applies policies (the
 * registry's, or a caller's) and is serialised here; the Workers read the cluster.
 */
public final class LocalApp {
    private final Cluster cluster;
    private final HttpUpstream upstream;
    private final int capacity;
    /** The limit last applied, so that a policy push that keeps it does not reset what was learned. */
    private ServicePolicy.ConcurrencyLimit limit;

    /**
     * @param capacity    most requests in flight to the app ({@code --capacity}; 0 = unlimited)
     * @param bodyTimeout longest the app's answer body may go without a byte ({@code --body-timeout}; zero: no limit)
     */
    public LocalApp(Transport transport, String service, InetSocketAddress app, int capacity, int queueSize,
                    Duration queueTimeout, Duration bodyTimeout) {
        this.capacity = capacity;
        cluster = new Cluster("app:" + service, Balancer.named("round-robin"), queueSize, queueTimeout);
        cluster.update(List.of(new Endpoint(service, "local-app", app.getHostString(), app.getPort(), 1, capacity,
                Map.of())));
        applyLimit(cluster.policy().concurrencyLimit());
        upstream = new HttpUpstream(transport, "app", e -> cluster.policy().maxConnections(), bodyTimeout);
    }

    public Cluster cluster() {
        return cluster;
    }

    /** The app's one endpoint: its in-flight count and the limit in force. */
    public EndpointState endpoint() {
        return cluster.endpoints().getFirst();
    }

    /** Keep-alive HTTP/1.1 connections to the app, at most the policy's circuit-breaker max-connections. */
    public HttpUpstream upstream() {
        return upstream;
    }

    public int capacity() {
        return capacity;
    }

    /** The local service's policy: it governs the inbound side (rate limits, timeout towards the app, the limit). */
    public synchronized void policy(ServicePolicy policy) {
        cluster.policy(policy);
        applyLimit(cluster.policy().concurrencyLimit());
    }

    /**
     * The inbound concurrency limit in front of the app: learned under {@code --capacity} and shedding at once, or
     * {@code --capacity} with the bounded queue. Only a changed limit is re-applied (learning starts over).
     */
    private synchronized void applyLimit(ServicePolicy.ConcurrencyLimit next) {
        if (next.equals(limit)) {
            return;
        }
        limit = next;
        EndpointState app = endpoint();
        if (next.adaptive()) {
            int max = next.max() > 0 ? next.max() : capacity > 0 ? capacity : 1000;
            if (capacity > 0) {
                max = Math.min(max, capacity);
            }
            int min = Math.min(next.min(), max);
            int initial = next.initial() > 0 ? Math.max(min, Math.min(next.initial(), max)) : max;
            app.limitAdaptively(initial, min, max);
        } else {
            app.limitByCapacityOnly();
        }
        cluster.shedWhenFull(next.adaptive());
    }
}
