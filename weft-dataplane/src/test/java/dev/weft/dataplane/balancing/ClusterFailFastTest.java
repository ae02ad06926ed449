package dev.weft.dataplane.balancing;

import dev.weft.registry.Endpoint;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster whose endpoints are all down (ejected, or paused after a refused dial) refuses at once with
 * {@code no-healthy-endpoint}, including the requests already queued when the last endpoint goes down; it never
 * keeps a queue that nothing can drain. The queue timeout here is a minute, so a test that passes cannot have been
 * answered by it.
 */
class ClusterFailFastTest {
    private static final Duration QUEUE_TIMEOUT = Duration.ofMinutes(1);
    private final EventLoop loop = new DefaultEventLoop();

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static Endpoint ep(String id, int capacity) {
        return new Endpoint("provider", id, "127.0.0.1", 7001, 1, capacity, Map.of());
    }

    private <T> T onLoop(Callable<T> c) throws Exception {
        return loop.submit(c).get(5, TimeUnit.SECONDS);
    }

    private static Cluster cluster(Endpoint... eps) {
        Cluster c = new Cluster("provider", Balancer.named("least-request"), 100, QUEUE_TIMEOUT);
        c.update(List.of(eps));
        return c;
    }

    private static void assertNoHealthyEndpoint(Future<EndpointState> f) {
        assertThat(f.isDone()).as("answered at once, not queued").isTrue();
        assertThat(f.cause()).isInstanceOf(NoHealthyEndpointException.class);
        assertThat(((NoCapacityException) f.cause()).kind()).isEqualTo("no-healthy-endpoint");
    }

    @Test
    void aRequestFailsAtOnceWhenTheOnlyEndpointIsUnreachable() throws Exception {
        Cluster c = cluster(ep("a", 4));
        c.endpoints().getFirst().markUnreachable();

        Future<EndpointState> f = onLoop(() -> c.acquire(loop));

        assertNoHealthyEndpoint(f);
        assertThat(f.cause().getMessage()).contains("'provider'", "all 1 ejected or unreachable");
        assertThat(c.queued()).isZero();
        assertThat(c.rejectedNoEndpoints()).isEqualTo(1);
    }

    @Test
    void aRequestFailsAtOnceWhenOneEndpointIsEjectedAndTheOtherUnreachable() throws Exception {
        Cluster c = cluster(ep("a", 4), ep("b", 4));
        c.endpoints().get(0).eject(TimeUnit.SECONDS.toNanos(60), TimeUnit.SECONDS.toNanos(60), 5);
        c.endpoints().get(1).markUnreachable();

        assertNoHealthyEndpoint(onLoop(() -> c.acquire(loop)));
    }

    @Test
    void requestsQueuedBehindAFullEndpointFailAtOnceWhenItGoesDown() throws Exception {
        Cluster c = cluster(ep("a", 1));
        EndpointState taken = onLoop(() -> c.acquire(loop).getNow());
        assertThat(taken).isNotNull();
        Future<EndpointState> w1 = onLoop(() -> c.acquire(loop));
        Future<EndpointState> w2 = onLoop(() -> c.acquire(loop));
        assertThat(w1.isDone()).as("queued: the endpoint is full, not down").isFalse();
        assertThat(c.queued()).isEqualTo(2);

        // The request in flight finds the instance gone (its dial refused) before it frees its slot.
        taken.markUnreachable();

        assertThat(w1.await(5, TimeUnit.SECONDS)).isTrue();
        assertNoHealthyEndpoint(w1);
        assertThat(w2.await(5, TimeUnit.SECONDS)).isTrue();
        assertNoHealthyEndpoint(w2);
        assertThat(c.queued()).isZero();
        c.release(taken);
    }

    @Test
    void whileOneEndpointIsUpRequestsQueueForItAsBefore() throws Exception {
        Cluster c = cluster(ep("a", 1), ep("b", 1));
        EndpointState first = onLoop(() -> c.acquire(loop).getNow());
        EndpointState second = onLoop(() -> c.acquire(loop).getNow());
        Future<EndpointState> waiting = onLoop(() -> c.acquire(loop));
        first.markUnreachable();

        assertThat(waiting.isDone()).as("the other endpoint is up, only full: the request waits for it").isFalse();
        c.release(second);
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(waiting.getNow()).isSameAs(second);
        c.release(waiting.getNow());
        c.release(first);
    }

    @Test
    void anEndpointWhosePauseEndedIsTriedAgain() throws Exception {
        Cluster c = cluster(ep("a", 4));
        EndpointState a = c.endpoints().getFirst();
        a.markUnreachable();
        assertNoHealthyEndpoint(onLoop(() -> c.acquire(loop)));

        a.markReachable(); // what a connected dial does; a pause that ran out reads the same

        EndpointState s = onLoop(() -> c.acquire(loop).getNow());
        assertThat(s).isSameAs(a);
        c.release(s);
    }
}
