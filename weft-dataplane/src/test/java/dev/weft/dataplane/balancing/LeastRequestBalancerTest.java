package dev.weft.dataplane.balancing;

import org.junit.jupiter.api.Test;

/** The balancer contract for {@code least-request}. */
class LeastRequestBalancerTest extends BalancerContract {
    @Override
    String balancer() {
        return "least-request";
    }

    @Override
    @Test
    void spreadsSequentialRequestsOverEndpointsOfEqualWeight() {
        super.spreadsSequentialRequestsOverEndpointsOfEqualWeight();
    }
}
