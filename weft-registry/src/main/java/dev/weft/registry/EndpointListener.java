package dev.weft.registry;

import java.util.List;

/** Receives the full, current endpoint list of a watched service after every change. */
@FunctionalInterface
public interface EndpointListener {
    /** @param endpoints immutable snapshot, possibly empty (the service has no live instance) */
    void onEndpoints(String service, List<Endpoint> endpoints);
}
