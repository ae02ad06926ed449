package dev.weft.dataplane;

import dev.weft.dataplane.observe.ObservabilityConfig;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/**
 * Everything a sidecar is started with. Built by {@code ./weft sidecar} from its flags (see SidecarCommand for
 * the defaults and their reasons) or directly by tests.
 *
 * @param service        name this instance registers as
 * @param instanceId     unique id of this instance within the service
 * @param app            the local application (inbound traffic goes there)
 * @param inbound        listener for mesh traffic from peer sidecars
 * @param advertise      address peers should dial for {@code inbound} (differs when binding 0.0.0.0)
 * @param outbound       shared listener routing by Host header; null for none
 * @param upstreams      service name → local listener bound to that service
 * @param admin          admin listener (/ready, /live, /config, /metrics)
 * @param registryUrl    weft://host:port or etcd://...
 * @param weight         registered weight
 * @param capacity       most requests in flight to the app (and registered for peers to honour)
 * @param queueSize      requests allowed to wait for capacity, per destination, before 503
 * @param queueTimeout   longest wait for capacity before 503
 * @param leaseTtl       registration lease TTL: a killed sidecar disappears from peers within it
 * @param balancer       round-robin or weighted-round-robin
 * @param collaborator   event-loop or virtual-thread
 * @param workers        Worker event loops
 * @param meshProtocol   link between sidecars: wmp (default) or http1
 * @param meshConnectionsPerPeer persistent WMP connections per peer and Worker
 * @param drainTimeout   longest a graceful drain waits for requests in flight
 * @param observability  metrics, tracing and access logs (docs/observability.md)
 */
public record SidecarConfig(String service, String instanceId, InetSocketAddress app, InetSocketAddress inbound,
                            InetSocketAddress advertise, InetSocketAddress outbound,
                            Map<String, InetSocketAddress> upstreams, InetSocketAddress admin, String registryUrl,
                            int weight, int capacity, int queueSize, Duration queueTimeout, Duration leaseTtl,
                            String balancer, String collaborator, int workers, String meshProtocol,
                            int meshConnectionsPerPeer,
                            Duration drainTimeout, ObservabilityConfig observability) {
    public SidecarConfig {
        upstreams = Map.copyOf(upstreams);
        observability = observability == null ? ObservabilityConfig.defaults() : observability;
    }

    /** Everything observed with the defaults (metrics, tracing at 100% to a weft:// control plane, no access log). */
    public SidecarConfig(String service, String instanceId, InetSocketAddress app, InetSocketAddress inbound,
                         InetSocketAddress advertise, InetSocketAddress outbound,
                         Map<String, InetSocketAddress> upstreams, InetSocketAddress admin, String registryUrl,
                         int weight, int capacity, int queueSize, Duration queueTimeout, Duration leaseTtl,
                         String balancer, String collaborator, int workers, String meshProtocol,
                         int meshConnectionsPerPeer, Duration drainTimeout) {
        this(service, instanceId, app, inbound, advertise, outbound, upstreams, admin, registryUrl, weight, capacity,
                queueSize, queueTimeout, leaseTtl, balancer, collaborator, workers, meshProtocol,
                meshConnectionsPerPeer, drainTimeout, ObservabilityConfig.defaults());
    }
}
