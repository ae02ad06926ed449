package dev.weft.dataplane.balancing;

/** The balancer contract for {@code round-robin}. */
class RoundRobinBalancerTest extends BalancerContract {
    @Override
    String balancer() {
        return "round-robin";
    }
}
