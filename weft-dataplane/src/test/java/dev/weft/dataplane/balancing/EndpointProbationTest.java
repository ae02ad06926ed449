package dev.weft.dataplane.balancing;

import dev.weft.registry.Endpoint;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An endpoint back from an ejection, or from a pause after refused dials, takes one request at a time until one is
 * answered well: a dead instance costs one failed request per ejection, not a burst from every Worker at once.
 */
class EndpointProbationTest {
    private final EventLoop loop = new DefaultEventLoop();

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static Cluster cluster(String... ids) {
        Cluster c = new Cluster("provider", Balancer.named("p2c-peak-ewma"), 100, Duration.ofMinutes(1));
        List<Endpoint> eps = new ArrayList<>();
        for (String id : ids) {
            eps.add(new Endpoint("provider", id, "127.0.0.1", 7001, 1, 50, Map.of()));
        }
        c.update(eps);
        return c;
    }

    private static void sleepPast(long nanos) throws InterruptedException {
        Thread.sleep(nanos / 1_000_000 + 20);
    }

    @Test
    void afterAnEjectionOneRequestProbesAndTheRestWait() throws Exception {
        Cluster c = cluster("a");
        EndpointState a = c.endpoints().getFirst();
        long base = Duration.ofMillis(50).toNanos();
        a.eject(base, base, 5);
        sleepPast(base);

        List<Future<EndpointState>> asked = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            asked.add(loop.submit(() -> c.acquire(loop)).get(5, TimeUnit.SECONDS));
        }
        assertThat(asked.stream().filter(Future::isDone).count()).as("granted at once: the probe only").isEqualTo(1);
        assertThat(a.inFlight()).isEqualTo(1);

        // The probe is answered well: probation ends and the waiting requests go.
        c.recordOutcome(a, false);
        loop.submit(() -> c.release(a)).get(5, TimeUnit.SECONDS);
        assertThat(a.onProbation()).isFalse();
        for (Future<EndpointState> f : asked.subList(1, asked.size())) {
            assertThat(f.get(5, TimeUnit.SECONDS)).isSameAs(a);
        }
        assertThat(a.inFlight()).isEqualTo(9);
    }

    @Test
    void aFailedProbeEjectsAgainAndOtherEndpointsTakeTheTraffic() throws Exception {
        Cluster c = cluster("a", "b");
        EndpointState a = c.endpoints().get(0);
        EndpointState b = c.endpoints().get(1);
        long base = Duration.ofMillis(50).toNanos();
        a.eject(base, base * 4, 5); // 5: the default policy's threshold, so one more failure ejects again
        sleepPast(base);

        int toA = 0;
        for (int i = 0; i < 20; i++) {
            EndpointState got = loop.submit(() -> c.acquire(loop)).get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
            if (got == a) {
                toA++;
            }
        }
        assertThat(toA).as("requests sent to the endpoint on probation while its probe is out").isEqualTo(1);

        c.recordOutcome(a, true); // the probe failed: out again, for longer
        loop.submit(() -> c.release(a)).get(5, TimeUnit.SECONDS);
        assertThat(a.isEjected()).isTrue();
        assertThat(a.onProbation()).isTrue();
        assertThat(b.onProbation()).isFalse();
    }

    @Test
    void aProbeReleasedWithoutAnAnswerLetsTheNextOneThrough() throws Exception {
        Cluster c = cluster("a");
        EndpointState a = c.endpoints().getFirst();
        a.markUnreachable();
        // The pause after a refused dial is a second; the probe gate is what this test is about, so end it early.
        a.markReachable();

        EndpointState probe = loop.submit(() -> c.acquire(loop)).get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
        assertThat(probe).isSameAs(a);
        assertThat(a.hasRoom()).as("one probe at a time").isFalse();
        loop.submit(() -> c.release(a)).get(5, TimeUnit.SECONDS); // cancelled: no outcome recorded
        assertThat(a.hasRoom()).isTrue();
        assertThat(a.onProbation()).as("still on probation: nothing was answered").isTrue();
    }
}
