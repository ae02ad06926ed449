package dev.weft.dataplane.outbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.exchange.ExchangeContext;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.resilience.ServicePolicy;

/**
 * Names where a request goes: the {@link Destination}'s cluster and the policy route its method and path match,
 * which sets the policy every later phase reads. A request naming no usable destination is answered here
 * (503 {@code unknown-service}, or 400 when it names none at all).
 *
 * <p>Thread: the exchange's loop; stateless.
 */
public final class RoutePhase implements Phase {
    private final Destination destination;
    private final SidecarMetrics metrics;

    public RoutePhase(Destination destination, SidecarMetrics metrics) {
        this.destination = destination;
        this.metrics = metrics;
    }

    @Override
    public String name() {
        return "route";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        Cluster cluster;
        try {
            cluster = destination.resolve(x.head());
        } catch (Destination.RouteException e) {
            if ("unknown-service".equals(e.kind())) {
                metrics.unknownService.increment();
            } else {
                metrics.badRequests.increment();
            }
            return new ExchangeError(e.status(), e.kind(), e.getMessage(), false);
        }
        ServicePolicy.Route route = cluster.policy().route(x.head().method(), x.head().path());
        x.route(cluster, route);
        x.trace().routed(cluster.service(), route != null ? route.name() : null);
        return null;
    }
}
