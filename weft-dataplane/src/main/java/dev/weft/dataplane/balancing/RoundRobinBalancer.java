package dev.weft.dataplane.balancing;

import java.util.List;

/** Plain round robin that skips endpoints at capacity. Worker-confined. */
final class RoundRobinBalancer implements Balancer {
    private int next;

    @Override
    public EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude) {
        int n = endpoints.size();
        for (int i = 0; i < n; i++) {
            int idx = Math.floorMod(next++, n);
            EndpointState e = endpoints.get(idx);
            if (e != exclude && e.tryAcquire()) {
                return e;
            }
        }
        return null;
    }
}
