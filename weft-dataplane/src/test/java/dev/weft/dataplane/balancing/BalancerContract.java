package dev.weft.dataplane.balancing;

import dev.weft.registry.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link Balancer} must do, whatever its algorithm: take a slot only where there is room, give null when
 * there is none, never give the excluded endpoint of a retry, spread requests over endpoints of equal weight, and
 * skip endpoints that are ejected, unreachable or removed. Runs once per balancer the factory knows (one subclass
 * each); what is particular to one balancer (weights, latency, ring-hash stickiness) stays in {@link BalancersTest}.
 *
 * <p>Every pick is made with a different hash key, so that ring-hash is spread by its keys as in use; the other
 * balancers ignore the key.
 */
abstract class BalancerContract {

    /** The name given to {@link Balancer#named}. */
    abstract String balancer();

    private Balancer fresh() {
        return Balancer.named(balancer()).create();
    }

    private static long key(int i) {
        return Balancer.hashOf("user-" + i);
    }

    /** Endpoints e0, e1... of weight 1 with these capacities (0: the learned limit). */
    static List<EndpointState> endpoints(int... capacities) {
        List<EndpointState> out = new ArrayList<>();
        for (int i = 0; i < capacities.length; i++) {
            out.add(new EndpointState(new Endpoint("svc", "e" + i, "127.0.0.1", 1000 + i, 1, capacities[i], Map.of())));
        }
        return List.copyOf(out);
    }

    /** Picks {@code n} times, releasing each slot at once (requests that do not overlap); counts by endpoint id. */
    private Map<String, Integer> sequentialPicks(Balancer b, List<EndpointState> eps, int n, EndpointState exclude) {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < n; i++) {
            EndpointState e = b.pick(eps, key(i), exclude);
            assertThat(e).as("pick %d", i).isNotNull();
            counts.merge(e.endpoint().id(), 1, Integer::sum);
            e.releaseSlot();
        }
        return counts;
    }

    /** Picks until the balancer gives null (at most {@code max} times), holding every slot; counts by endpoint id. */
    private Map<String, Integer> heldPicks(Balancer b, List<EndpointState> eps, int max, EndpointState exclude) {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < max; i++) {
            EndpointState e = b.pick(eps, key(i), exclude);
            if (e == null) {
                break;
            }
            counts.merge(e.endpoint().id(), 1, Integer::sum);
            for (EndpointState s : eps) {
                assertThat(s.inFlight()).as("%s holds no more than its capacity", s).isLessThanOrEqualTo(s.effectiveCapacity());
            }
        }
        return counts;
    }

    @Test
    void picksOnlyEndpointsWithRoomAndFillsEveryCapacityExactly() {
        List<EndpointState> eps = endpoints(2, 3, 1);
        Balancer b = fresh();

        Map<String, Integer> held = heldPicks(b, eps, 100, null);

        assertThat(held).containsEntry("e0", 2).containsEntry("e1", 3).containsEntry("e2", 1);
        assertThat(b.pick(eps, key(1000))).as("every endpoint is full").isNull();
    }

    @Test
    void picksNullAndTakesNoSlotWhenNoEndpointHasRoom() {
        List<EndpointState> eps = endpoints(1, 1, 1);
        eps.forEach(EndpointState::tryAcquire);

        for (int i = 0; i < 20; i++) {
            assertThat(fresh().pick(eps, key(i))).isNull();
        }
        assertThat(eps).allSatisfy(e -> assertThat(e.inFlight()).isEqualTo(1));
    }

    @Test
    void picksNullFromAnEmptyEndpointList() {
        assertThat(fresh().pick(List.of(), key(0))).isNull();
    }

    @Test
    void neverPicksTheExcludedEndpointWhileAnotherHasRoom() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);
        EndpointState excluded = eps.get(1);
        Balancer b = fresh();

        assertThat(sequentialPicks(b, eps, 300, excluded)).doesNotContainKey("e1");
        assertThat(heldPicks(b, endpoints(2, 5, 2), 100, null)).as("without exclusion e1 is picked").containsKey("e1");
    }

    @Test
    void neverPicksTheExcludedEndpointEvenWhenItIsTheHeaviest() {
        List<EndpointState> eps = new ArrayList<>();
        int[] weights = {1, 5, 1};
        for (int i = 0; i < weights.length; i++) {
            eps.add(new EndpointState(new Endpoint("svc", "e" + i, "127.0.0.1", 1000 + i, weights[i], 10_000, Map.of())));
        }
        Balancer b = fresh();

        for (int i = 0; i < 50; i++) {
            EndpointState e = b.pick(eps, key(i), eps.get(1));
            assertThat(e).isNotNull().isNotSameAs(eps.get(1)); // slots held: the others fill up, e1 would attract more
        }
    }

    @Test
    void picksNullRatherThanTheExcludedEndpointWhenOnlyItHasRoom() {
        List<EndpointState> eps = endpoints(2, 5, 2);
        Balancer b = fresh();

        Map<String, Integer> held = heldPicks(b, eps, 100, eps.get(1));

        assertThat(held).containsEntry("e0", 2).containsEntry("e2", 2).doesNotContainKey("e1");
        assertThat(eps.get(1).inFlight()).isZero();
        // The Cluster, not the balancer, falls back to the excluded endpoint (Cluster.tryPick).
        assertThat(b.pick(eps, key(7), null)).isSameAs(eps.get(1));
    }

    @Test
    void spreadsRequestsHeldInFlightOverEndpointsOfEqualWeight() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);

        Map<String, Integer> held = heldPicks(fresh(), eps, 300, null);

        assertThat(held.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(300);
        assertThat(held).as("each endpoint takes a fair part (a third would be 100)").hasSize(3)
                .allSatisfy((id, n) -> assertThat(n).as(id).isGreaterThanOrEqualTo(60));
    }

    @Test
    void spreadsSequentialRequestsOverEndpointsOfEqualWeight() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);

        Map<String, Integer> counts = sequentialPicks(fresh(), eps, 300, null);

        assertThat(counts).as("requests that never overlap still reach every endpoint (a third would be 100)").hasSize(3)
                .allSatisfy((id, n) -> assertThat(n).as(id).isGreaterThanOrEqualTo(60));
    }

    @Test
    void neverPicksAnEjectedEndpointWhileOthersAreHealthy() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);
        eps.get(1).eject(TimeUnit.SECONDS.toNanos(60), TimeUnit.SECONDS.toNanos(60), 5);
        Balancer b = fresh();

        assertThat(sequentialPicks(b, eps, 300, null)).doesNotContainKey("e1");
        List<EndpointState> small = endpoints(2, 2, 2);
        small.get(1).eject(TimeUnit.SECONDS.toNanos(60), TimeUnit.SECONDS.toNanos(60), 5);
        assertThat(heldPicks(b, small, 100, null)).as("not even once the others are full")
                .containsEntry("e0", 2).containsEntry("e2", 2).doesNotContainKey("e1");
    }

    @Test
    void neverPicksAnUnreachableEndpointWhileOthersAreReachable() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);
        eps.get(0).markUnreachable();

        assertThat(sequentialPicks(fresh(), eps, 300, null)).doesNotContainKey("e0");
    }

    @Test
    void neverPicksARemovedEndpoint() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);
        eps.get(2).markRemoved();

        assertThat(sequentialPicks(fresh(), eps, 300, null)).doesNotContainKey("e2");
    }

    @Test
    void picksOnlyFromTheNewListOnceTheEndpointListChanges() {
        List<EndpointState> eps = endpoints(10_000, 10_000, 10_000);
        Balancer b = fresh();
        sequentialPicks(b, eps, 30, null); // a balancer that keeps state per list (ring, scores) builds it here

        List<EndpointState> two = List.of(eps.get(0), eps.get(2));

        assertThat(sequentialPicks(b, two, 300, null)).doesNotContainKey("e1");
    }

    @Test
    void worksWithOneEndpoint() {
        List<EndpointState> one = endpoints(2);
        EndpointState only = one.getFirst();
        Balancer b = fresh();

        assertThat(b.pick(one, key(1))).isSameAs(only);
        assertThat(b.pick(one, key(2))).isSameAs(only);
        assertThat(b.pick(one, key(3))).as("at capacity").isNull();
        only.releaseSlot();
        assertThat(b.pick(one, key(4))).as("room again").isSameAs(only);
        only.releaseSlot();
        assertThat(b.pick(one, key(5), only)).as("excluded, and nothing else").isNull();
        assertThat(only.inFlight()).isEqualTo(1);
    }
}
