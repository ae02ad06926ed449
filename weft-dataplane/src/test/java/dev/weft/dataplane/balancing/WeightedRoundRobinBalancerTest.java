package dev.weft.dataplane.balancing;

/** The balancer contract for {@code weighted-round-robin}. */
class WeightedRoundRobinBalancerTest extends BalancerContract {
    @Override
    String balancer() {
        return "weighted-round-robin";
    }
}
