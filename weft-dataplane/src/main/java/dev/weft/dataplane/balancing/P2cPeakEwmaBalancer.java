package dev.weft.dataplane.balancing;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Power of two choices over peak-EWMA latency weighted by outstanding requests (Finagle's and Linkerd's default):
 * draw two endpoints at random, send to the one with the lower {@link EndpointState#cost()}. Comparing only two keeps
 * a pick O(1) and, unlike always taking the global minimum, avoids every Worker piling onto the same endpoint
 * between updates. Weights divide the cost, so registered weights still hold; capacities (registered or learned) are
 * hard limits. Worker-confined (no state besides the shared endpoint counters).
 */
final class P2cPeakEwmaBalancer implements Balancer {

    @Override
    public EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude) {
        int n = endpoints.size();
        if (n == 0) {
            return null;
        }
        if (n == 1) {
            EndpointState only = endpoints.getFirst();
            return only != exclude && only.tryAcquire() ? only : null;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 3; attempt++) {
            int a = random.nextInt(n);
            int b = random.nextInt(n - 1);
            if (b >= a) {
                b++;
            }
            EndpointState ea = endpoints.get(a);
            EndpointState eb = endpoints.get(b);
            boolean roomA = ea != exclude && ea.hasRoom();
            boolean roomB = eb != exclude && eb.hasRoom();
            EndpointState first;
            EndpointState second;
            if (roomA && roomB) {
                boolean aCheaper = ea.cost() <= eb.cost();
                first = aCheaper ? ea : eb;
                second = aCheaper ? eb : ea;
            } else if (roomA || roomB) {
                first = roomA ? ea : eb;
                second = null;
            } else {
                continue;
            }
            if (first.tryAcquire()) {
                return first;
            }
            if (second != null && second.tryAcquire()) {
                return second;
            }
        }
        // Both draws were full: fall back to a scan, so a free endpoint is never missed while requests queue.
        EndpointState best = null;
        for (EndpointState e : endpoints) {
            if (e != exclude && e.hasRoom() && (best == null || e.cost() < best.cost())) {
                best = e;
            }
        }
        return best != null && best.tryAcquire() ? best : null;
    }
}
