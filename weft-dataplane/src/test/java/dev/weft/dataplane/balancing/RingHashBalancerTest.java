package dev.weft.dataplane.balancing;

/** The balancer contract for {@code ring-hash:x-user}. */
class RingHashBalancerTest extends BalancerContract {
    @Override
    String balancer() {
        return "ring-hash:x-user";
    }
}
