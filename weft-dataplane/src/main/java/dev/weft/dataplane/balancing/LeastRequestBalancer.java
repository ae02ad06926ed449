package dev.weft.dataplane.balancing;

import java.util.List;

/** Sends to the endpoint with the fewest requests in flight relative to its weight. Worker-confined, stateless. */
final class LeastRequestBalancer implements Balancer {

    @Override
    public EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude) {
        for (int attempt = 0; attempt < endpoints.size(); attempt++) {
            EndpointState best = null;
            double bestLoad = Double.MAX_VALUE;
            for (EndpointState e : endpoints) {
                if (e == exclude || !e.hasRoom()) {
                    continue;
                }
                double load = (double) e.inFlight() / e.weight();
                if (load < bestLoad) {
                    bestLoad = load;
                    best = e;
                }
            }
            if (best == null) {
                return null;
            }
            if (best.tryAcquire()) {
                return best;
            }
        }
        return null;
    }
}
