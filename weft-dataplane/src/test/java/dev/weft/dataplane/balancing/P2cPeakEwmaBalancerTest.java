package dev.weft.dataplane.balancing;

import org.junit.jupiter.api.Test;

/** The balancer contract for {@code p2c-peak-ewma}, the default. */
class P2cPeakEwmaBalancerTest extends BalancerContract {
    @Override
    String balancer() {
        return "p2c-peak-ewma";
    }

    @Override
    @Test
    void picksNullFromAnEmptyEndpointList() {
        super.picksNullFromAnEmptyEndpointList();
    }
}
