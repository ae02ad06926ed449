package dev.weft.dataplane.balancing;

import dev.weft.registry.Endpoint;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ClusterTest {
    private final EventLoop loop = new DefaultEventLoop();

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static Endpoint ep(String id, int weight, int capacity) {
        return new Endpoint("provider", id, "127.0.0.1", 1000 + id.hashCode() % 1000 + 1000, weight, capacity, Map.of());
    }

    private <T> T onLoop(Callable<T> c) throws Exception {
        return loop.submit(c).get(5, TimeUnit.SECONDS);
    }

    @Test
    void weightsOneTwoThreeGiveSharesOneTwoThreeWhenNobodyIsFull() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("weighted-round-robin"), 10, Duration.ofSeconds(1));
        c.update(List.of(ep("small", 1, 0), ep("medium", 2, 0), ep("large", 3, 0)));
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < 600; i++) {
            EndpointState s = onLoop(() -> c.acquire(loop).getNow());
            counts.merge(s.endpoint().id(), 1, Integer::sum);
            c.release(s);
        }
        assertThat(counts).containsEntry("small", 100).containsEntry("medium", 200).containsEntry("large", 300);
    }

    @Test
    void smoothWeightedRoundRobinInterleavesRatherThanBursts() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("weighted-round-robin"), 10, Duration.ofSeconds(1));
        c.update(List.of(ep("a", 1, 0), ep("b", 2, 0), ep("c", 3, 0)));
        StringBuilder seq = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            EndpointState s = onLoop(() -> c.acquire(loop).getNow());
            seq.append(s.endpoint().id());
            c.release(s);
        }
        assertThat(seq.toString()).isEqualTo("cbacbc");
    }

    @Test
    void noEndpointEverHoldsMoreRequestsThanItsCapacityAndTheRestQueue() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("weighted-round-robin"), 100, Duration.ofSeconds(5));
        c.update(List.of(ep("small", 1, 2), ep("large", 3, 3)));
        List<Future<EndpointState>> got = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            got.add(onLoop(() -> c.acquire(loop)));
        }
        assertThat(got.stream().filter(Future::isSuccess).count()).isEqualTo(5);
        assertThat(c.queued()).isEqualTo(3);
        for (EndpointState s : c.endpoints()) {
            assertThat(s.inFlight()).isLessThanOrEqualTo(s.capacity());
        }
        // Freeing one slot hands it to the oldest waiter.
        EndpointState first = got.getFirst().getNow();
        c.release(first);
        assertThat(got.get(5).await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(got.get(5).isSuccess()).isTrue();
        assertThat(c.queued()).isEqualTo(2);
    }

    /**
     * A slot freed on another thread is handed to a waiter on the waiter's own loop. Completed from the freeing
     * thread, the waiter's promise read done at once while its listeners ran later on its loop: an exchange that had
     * just queued went on to its next step (which runs at once when the step is done) before its own listener had
     * told it the endpoint, and the request was lost (two Workers, session 27).
     */
    @Test
    void aSlotFreedOnAnotherThreadReachesTheWaiterOnItsOwnLoopWithItsListenersRunFirst() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("round-robin"), 10, Duration.ofSeconds(5));
        c.update(List.of(ep("only", 1, 1)));
        String loopThread = onLoop(() -> Thread.currentThread().getName());
        EndpointState held = onLoop(() -> c.acquire(loop).getNow());
        List<String> seen = new ArrayList<>();
        Future<EndpointState> waiter = onLoop(() -> {
            Future<EndpointState> f = c.acquire(loop);
            f.addListener(x -> seen.add("listener on " + Thread.currentThread().getName()));
            return f;
        });
        assertThat(waiter.isDone()).isFalse();
        CountDownLatch loopHeld = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        loop.execute(() -> {
            loopHeld.countDown();
            try {
                letGo.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(loopHeld.await(5, TimeUnit.SECONDS)).isTrue();
        c.release(held); // on the test's thread, while the waiter's loop is busy
        assertThat(waiter.isDone()).as("not completed off its loop").isFalse();
        assertThat(held.inFlight()).as("the slot is the waiter's already").isEqualTo(1);
        letGo.countDown();
        assertThat(waiter.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(waiter.getNow()).isSameAs(held);
        assertThat(onLoop(() -> seen)).containsExactly("listener on " + loopThread);
        assertThat(c.queued()).isZero();
    }

    @Test
    void aFullQueueIsRefusedAtOnceWithAMessageNamingTheService() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("round-robin"), 1, Duration.ofSeconds(5));
        c.update(List.of(ep("only", 1, 1)));
        onLoop(() -> c.acquire(loop));
        onLoop(() -> c.acquire(loop));
        Future<EndpointState> third = onLoop(() -> c.acquire(loop));
        assertThat(third.isDone()).isTrue();
        assertThat(third.cause()).isInstanceOf(NoCapacityException.class)
                .hasMessageContaining("service 'provider' is at capacity and its queue is full");
        assertThat(c.rejectedQueueFull()).isEqualTo(1);
    }

    @Test
    void aWaiterTimesOutWith503RatherThanWaitingForever() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("round-robin"), 10, Duration.ofMillis(100));
        c.update(List.of(ep("only", 1, 1)));
        onLoop(() -> c.acquire(loop));
        Future<EndpointState> waiting = onLoop(() -> c.acquire(loop));
        assertThat(waiting.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(waiting.cause()).hasMessageContaining("no capacity at service 'provider' within 100 ms");
        // The count drops just after the waiter is failed (same task), so wait for it rather than race it.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> c.queued() == 0);
    }

    @Test
    void aServiceWithNoLiveEndpointIsReportedUnknown() throws Exception {
        Cluster c = new Cluster("provder", Balancer.named("round-robin"), 10, Duration.ofSeconds(1));
        Future<EndpointState> waiting = onLoop(() -> c.acquire(loop));
        assertThat(waiting.isDone()).isFalse(); // not known yet: waits for the registry's first answer
        c.update(List.of());
        assertThat(waiting.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(waiting.cause()).isInstanceOf(UnknownServiceException.class)
                .hasMessageContaining("unknown service 'provder'");
    }

    @Test
    void anEndpointKeptAcrossARegistryUpdateKeepsItsInFlightCount() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("round-robin"), 10, Duration.ofSeconds(1));
        c.update(List.of(ep("a", 1, 5)));
        EndpointState s = onLoop(() -> c.acquire(loop).getNow());
        c.update(List.of(ep("a", 1, 5), ep("b", 1, 5)));
        assertThat(c.endpoints().getFirst()).isSameAs(s);
        assertThat(s.inFlight()).isEqualTo(1);
    }

    @Test
    void thePerCallerBucketToleratesThePolicysBurstNotATenthOfItsRate() {
        Cluster c = new Cluster("app:provider", Balancer.named("least-request"), 10, Duration.ofSeconds(1));
        // One request a second per caller, with a burst of 20: 21 pass at once (the one the rate allows and the
        // burst), the 22nd waits. Before, the per-caller bucket ignored the burst and took rate/10 (at least 1).
        c.policy(new dev.weft.dataplane.resilience.ServicePolicy(null,
                dev.weft.dataplane.resilience.ServicePolicy.RetryPolicy.DEFAULT,
                dev.weft.dataplane.resilience.ServicePolicy.OutlierPolicy.DEFAULT, 0, 20, 1));
        int passed = 0;
        for (int i = 0; i < 22; i++) {
            if (c.checkRate("consumer", null) == 0) {
                passed++;
            }
        }
        assertThat(passed).isEqualTo(21);
        assertThat(c.checkRate("another-caller", null)).as("each caller has its own bucket").isZero();
    }

    @Test
    void withoutABurstThePerCallerBucketTakesATenthOfItsOwnRate() {
        Cluster c = new Cluster("app:provider", Balancer.named("least-request"), 10, Duration.ofSeconds(1));
        c.policy(new dev.weft.dataplane.resilience.ServicePolicy(null,
                dev.weft.dataplane.resilience.ServicePolicy.RetryPolicy.DEFAULT,
                dev.weft.dataplane.resilience.ServicePolicy.OutlierPolicy.DEFAULT, 1000, 0, 50));
        int passed = 0;
        for (int i = 0; i < 10; i++) {
            if (c.checkRate("consumer", null) == 0) {
                passed++;
            }
        }
        assertThat(passed).as("burst 5 (a tenth of 50/s), not 100 (a tenth of the service's 1000/s)").isEqualTo(6);
    }

    @Test
    void aFreeSlotIsGrantedAtOnceWithoutAFutureAndAFullClusterSendsTheCallerToItsQueue() throws Exception {
        Cluster c = new Cluster("provider", Balancer.named("weighted-round-robin"), 10, Duration.ofSeconds(5));
        assertThat(onLoop(() -> Optional.ofNullable(c.acquireNow(loop, 0, null)))).as("no endpoints yet").isEmpty();
        c.update(List.of(ep("only", 1, 1)));
        EndpointState first = onLoop(() -> c.acquireNow(loop, 0, null));
        assertThat(first).isNotNull();
        assertThat(first.inFlight()).isEqualTo(1);
        assertThat(onLoop(() -> Optional.ofNullable(c.acquireNow(loop, 0, null)))).as("full: the caller must queue")
                .isEmpty();
        Future<EndpointState> waiter = onLoop(() -> c.acquire(loop));
        assertThat(waiter.isDone()).isFalse();
        assertThat(c.queued()).isEqualTo(1);
        // A slot frees while someone waits: it is the waiter's, and a newcomer asking at once gets nothing.
        onLoop(() -> {
            c.release(first);
            return null;
        });
        assertThat(waiter.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(waiter.getNow()).isSameAs(first);
        assertThat(onLoop(() -> Optional.ofNullable(c.acquireNow(loop, 0, null)))).isEmpty();
        onLoop(() -> {
            c.release(waiter.getNow());
            return null;
        });
        assertThat(onLoop(() -> c.acquireNow(loop, 0, null))).as("free again, nobody waiting").isSameAs(first);
    }
}
