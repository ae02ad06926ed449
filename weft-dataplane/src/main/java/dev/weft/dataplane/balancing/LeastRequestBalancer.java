package dev.weft.dataplane.balancing;

import java.util.List;

/**
 * Sends to the endpoint with the fewest requests in flight relative to its weight. Among equal loads (requests that do
 * not overlap all see zero) the scan starts at a random place, so ties spread instead of all going to the first.
 * Stateless: one instance serves every thread.
 */
final class LeastRequestBalancer implements Balancer {

    @Override
    public EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude) {
        int n = endpoints.size();
        if (n == 0) {
            return null;
        }
        int from = n == 1 ? 0 : java.util.concurrent.ThreadLocalRandom.current().nextInt(n);
        for (int attempt = 0; attempt < n; attempt++) {
            EndpointState best = null;
            double bestLoad = Double.MAX_VALUE;
            for (int k = 0; k < n; k++) {
                EndpointState e = endpoints.get((from + k) % n);
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
