package dev.weft.dataplane.balancing;

import java.util.List;

/**
 * Smooth weighted round robin (the nginx algorithm): every pick adds each endpoint's weight to its running score
 * and takes the highest, then subtracts the total. Weights 1:2:3 give the sequence spread out (c b c a b c), not in
 * bursts, which keeps each provider's queue short. Endpoints at capacity take no part in a round, so their score
 * does not build up while they are full and they are not flooded when a slot frees. Worker-confined.
 */
final class WeightedRoundRobinBalancer implements Balancer {
    private List<EndpointState> seen;
    private int[] current = new int[0];

    @Override
    public EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude) {
        if (endpoints != seen) {
            // The endpoint set changed (a registry update): scores restart, which only costs a few picks of smoothness.
            seen = endpoints;
            current = new int[endpoints.size()];
        }
        int n = endpoints.size();
        for (int attempt = 0; attempt < n; attempt++) {
            int total = 0;
            int best = -1;
            for (int i = 0; i < n; i++) {
                EndpointState e = endpoints.get(i);
                if (e == exclude || !e.hasRoom()) {
                    continue;
                }
                current[i] += e.weight();
                total += e.weight();
                if (best < 0 || current[i] > current[best]) {
                    best = i;
                }
            }
            if (best < 0) {
                return null;
            }
            current[best] -= total;
            EndpointState chosen = endpoints.get(best);
            // hasRoom() was a racy read; another Worker may have taken the last slot meanwhile. Try again if so.
            if (chosen.tryAcquire()) {
                return chosen;
            }
        }
        return null;
    }
}
