package dev.weft.dataplane.balancing;

import dev.weft.registry.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class BalancersTest {

    private static List<EndpointState> endpoints(int... weights) {
        List<EndpointState> out = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            out.add(new EndpointState(new Endpoint("svc", "e" + i, "127.0.0.1", 1000 + i, weights[i], 10_000, Map.of())));
        }
        return List.copyOf(out);
    }

    @Test
    void p2cPeakEwmaSpreadsOutstandingRequestsInProportionToWeight() {
        List<EndpointState> eps = endpoints(1, 2, 3);
        for (EndpointState e : eps) {
            e.recordLatency(50_000_000L, 0, false); // same latency: only load and weight differ
        }
        Balancer b = Balancer.named("p2c-peak-ewma").create();
        for (int i = 0; i < 600; i++) {
            assertThat(b.pick(eps, 0)).isNotNull(); // slots held: in-flight builds up like under load
        }
        double small = eps.get(0).inFlight();
        double large = eps.get(2).inFlight();
        assertThat(large / small).isBetween(2.0, 4.0);
    }

    @Test
    void p2cPeakEwmaSendsLessToAnEndpointThatBecameSlow() {
        List<EndpointState> eps = endpoints(1, 1);
        eps.get(0).recordLatency(5_000_000L, 0, false);
        eps.get(1).recordLatency(50_000_000L, 0, false); // ten times slower: peak-EWMA takes the peak at once
        Balancer b = Balancer.named("p2c-peak-ewma").create();
        Map<String, Integer> picks = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            EndpointState e = b.pick(eps, 0);
            picks.merge(e.endpoint().id(), 1, Integer::sum);
        }
        assertThat(picks.getOrDefault("e0", 0)).isGreaterThan(picks.getOrDefault("e1", 0) * 3);
    }

    @Test
    void leastRequestPrefersTheLeastLoadedRelativeToWeight() {
        List<EndpointState> eps = endpoints(1, 1);
        eps.get(0).tryAcquire();
        eps.get(0).tryAcquire();
        assertThat(Balancer.named("least-request").create().pick(eps, 0).endpoint().id()).isEqualTo("e1");
    }

    @Test
    void ringHashSendsTheSameKeyToTheSameEndpointAndMovesFewKeysWhenOneLeaves() {
        List<EndpointState> eps = endpoints(1, 1, 1, 1);
        Balancer b = Balancer.named("ring-hash:x-user").create();
        Map<String, String> before = new HashMap<>();
        for (int k = 0; k < 400; k++) {
            EndpointState e = b.pick(eps, Balancer.hashOf("user-" + k));
            before.put("user-" + k, e.endpoint().id());
            e.releaseSlot();
            EndpointState again = b.pick(eps, Balancer.hashOf("user-" + k));
            assertThat(again).isSameAs(e);
            again.releaseSlot();
        }
        List<EndpointState> three = List.of(eps.get(0), eps.get(1), eps.get(2));
        int moved = 0;
        for (Map.Entry<String, String> kv : before.entrySet()) {
            EndpointState e = b.pick(three, Balancer.hashOf(kv.getKey()));
            e.releaseSlot();
            if (!kv.getValue().equals("e3") && !e.endpoint().id().equals(kv.getValue())) {
                moved++;
            }
        }
        assertThat(moved).as("keys moved that did not belong to the removed endpoint").isZero();
    }

    @Test
    void anEndpointWithoutRegisteredCapacityGetsALearnedLimit() {
        EndpointState e = new EndpointState(new Endpoint("svc", "e", "127.0.0.1", 1, 1, 0, Map.of()));
        assertThat(e.effectiveCapacity()).isEqualTo(20);
        int taken = 0;
        while (e.tryAcquire()) {
            taken++;
        }
        assertThat(taken).isEqualTo(e.effectiveCapacity());
    }

    @Test
    void unknownBalancerNamesAreRefusedWithTheListOfKnownOnes() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Balancer.named("fastest"))
                .hasMessageContaining("unknown balancer 'fastest'").hasMessageContaining("p2c-peak-ewma");
    }
}
