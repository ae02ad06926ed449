package dev.weft.dataplane.outbound;

import dev.weft.control.ControlPlane;
import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.protocol.WmpHeaders;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The Router against a real (embedded) control plane: a Host that names no valid service is refused before any
 * watch starts, and destinations named only by Host are dropped, with their watch, once they serve nothing, while
 * pinned ones ({@code --upstream}) and busy ones stay.
 */
class RouterTest {
    private final ControlPlane control = new ControlPlane();
    private final EventLoop loop = new DefaultEventLoop();
    private Registry registry;
    private Router router;

    @BeforeEach
    void start() throws Exception {
        InetSocketAddress a = control.start(new InetSocketAddress("127.0.0.1", 0),
                Files.createTempDirectory("weft-router-test"));
        registry = Registries.open("weft://127.0.0.1:" + a.getPort());
        router = new Router(registry, Balancer.named("least-request"), 100, Duration.ofMinutes(1), 256);
    }

    @AfterEach
    void stop() throws Exception {
        router.close();
        registry.close();
        control.close();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static RequestHead get(String host) {
        return new RequestHead("GET", host, "/", new WmpHeaders(1));
    }

    @Test
    void aHostThatNamesNoServiceIsRefused400WithoutAWatch() {
        Destination byHost = Destination.byHost(router);
        for (String host : List.of("a~b", "a!b:80", "[::1]:8080", "-provider", "x".repeat(254))) {
            Destination.RouteException e = catchThrowableOfType(Destination.RouteException.class,
                    () -> byHost.resolve(get(host)));
            assertThat(e).as(host).isNotNull();
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.kind()).isEqualTo("bad-request");
        }
        assertThat(router.clusters()).isEmpty();
    }

    @Test
    void aValidHostIsRoutedCaseInsensitivelyWithoutItsPort() throws Exception {
        Cluster c = Destination.byHost(router).resolve(get("Provider.prod:8080"));
        assertThat(c.service()).isEqualTo("provider.prod");
    }

    @Test
    void aDestinationNamedByHostExpiresAfterAPeriodWithoutRequestsAndComesBackOnTheNext() throws Exception {
        Cluster first = Destination.byHost(router).resolve(get("orders"));

        assertThat(router.expireIdle()).as("used in the period it was made in").isZero();
        assertThat(router.expireIdle()).as("a whole period without a request").isEqualTo(1);
        assertThat(router.clusters()).isEmpty();
        assertThat(router.expiredClusters()).isEqualTo(1);

        Cluster again = Destination.byHost(router).resolve(get("orders"));
        assertThat(again).isNotSameAs(first);
        assertThat(router.clusters()).containsExactly(again);
    }

    @Test
    void aPinnedDestinationNeverExpires() {
        router.pin("provider");
        for (int i = 0; i < 3; i++) {
            assertThat(router.expireIdle()).isZero();
        }
        assertThat(router.clusters()).extracting(Cluster::service).containsExactly("provider");
    }

    @Test
    void aDestinationWithARequestInFlightDoesNotExpireUntilItEnds() throws Exception {
        Cluster c = router.cluster("orders");
        c.update(List.of(new Endpoint("orders", "o1", "127.0.0.1", 7001, 1, 4, Map.of())));
        EndpointState slot = loop.submit(() -> c.acquire(loop)).get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);

        assertThat(router.expireIdle()).isZero();
        assertThat(router.expireIdle()).as("no new request, but one in flight").isZero();

        c.release(slot);
        assertThat(router.expireIdle()).isEqualTo(1);
    }
}
