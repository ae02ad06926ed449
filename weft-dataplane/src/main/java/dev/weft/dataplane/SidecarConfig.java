package dev.weft.dataplane;

import dev.weft.dataplane.http.Http1RequestDecoder;
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
 * @param requestHeadTimeout longest an HTTP/1.1 listener waits for a request head to complete once its first byte
 *                       came, before 408 and close (zero: no limit; null: the default, 10 s)
 */
public record SidecarConfig(String service, String instanceId, InetSocketAddress app, InetSocketAddress inbound,
                            InetSocketAddress advertise, InetSocketAddress outbound,
                            Map<String, InetSocketAddress> upstreams, InetSocketAddress admin, String registryUrl,
                            int weight, int capacity, int queueSize, Duration queueTimeout, Duration leaseTtl,
                            String balancer, String collaborator, int workers, String meshProtocol,
                            int meshConnectionsPerPeer,
                            Duration drainTimeout, ObservabilityConfig observability, Duration requestHeadTimeout) {
    public SidecarConfig {
        upstreams = Map.copyOf(upstreams);
        observability = observability == null ? ObservabilityConfig.defaults() : observability;
        requestHeadTimeout = requestHeadTimeout == null ? Http1RequestDecoder.DEFAULT_HEAD_TIMEOUT : requestHeadTimeout;
        if (requestHeadTimeout.isNegative()) {
            throw new IllegalArgumentException("requestHeadTimeout " + requestHeadTimeout
                    + " is negative (expected a duration, or zero for no limit)");
        }
    }

    /** With the default request-head timeout. */
    public SidecarConfig(String service, String instanceId, InetSocketAddress app, InetSocketAddress inbound,
                         InetSocketAddress advertise, InetSocketAddress outbound,
                         Map<String, InetSocketAddress> upstreams, InetSocketAddress admin, String registryUrl,
                         int weight, int capacity, int queueSize, Duration queueTimeout, Duration leaseTtl,
                         String balancer, String collaborator, int workers, String meshProtocol,
                         int meshConnectionsPerPeer, Duration drainTimeout, ObservabilityConfig observability) {
        this(service, instanceId, app, inbound, advertise, outbound, upstreams, admin, registryUrl, weight, capacity,
                queueSize, queueTimeout, leaseTtl, balancer, collaborator, workers, meshProtocol,
                meshConnectionsPerPeer, drainTimeout, observability, null);
    }

    /**
     * Everything observed with the defaults (metrics, tracing at 100% to a weft:// control plane, no access log), and
     * the default request-head timeout.
     */
    public SidecarConfig(String service, String instanceId, InetSocketAddress app, InetSocketAddress inbound,
                         InetSocketAddress advertise, InetSocketAddress outbound,
                         Map<String, InetSocketAddress> upstreams, InetSocketAddress admin, String registryUrl,
                         int weight, int capacity, int queueSize, Duration queueTimeout, Duration leaseTtl,
                         String balancer, String collaborator, int workers, String meshProtocol,
                         int meshConnectionsPerPeer, Duration drainTimeout) {
        this(service, instanceId, app, inbound, advertise, outbound, upstreams, admin, registryUrl, weight, capacity,
                queueSize, queueTimeout, leaseTtl, balancer, collaborator, workers, meshProtocol,
                meshConnectionsPerPeer, drainTimeout, ObservabilityConfig.defaults(), null);
    }
}
