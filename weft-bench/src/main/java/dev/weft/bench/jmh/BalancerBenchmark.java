package dev.weft.bench.jmh;

import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.registry.Endpoint;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Choosing an endpoint for one request: the Worker's weighted round robin balancer alone ({@code pick}), and the
 * whole admission a request goes through ({@code admit}: {@link Cluster#acquire} with its promise, then the slot's
 * release). Endpoints have weights 1, 2, 3, 1, 2, 3... and a capacity that is never reached, as in a mesh below its
 * limits.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Dio.netty.noUnsafe=false"})
public class BalancerBenchmark {
    @Param({"3", "16"})
    public int endpoints;

    private Balancer balancer;
    private Cluster cluster;
    private List<EndpointState> states;

    @Setup(Level.Trial)
    public void setUp() {
        List<Endpoint> list = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            list.add(new Endpoint("provider", "p" + i, "127.0.0.1", 20_000 + i, 1 + i % 3, 200, Map.of()));
        }
        cluster = new Cluster("provider", Balancer.named("weighted-round-robin"), 2048, Duration.ofSeconds(5));
        cluster.update(list);
        states = cluster.endpoints();
        balancer = Balancer.named("weighted-round-robin").create();
    }

    @Benchmark
    public EndpointState pick() {
        EndpointState chosen = balancer.pick(states, 0);
        cluster.release(chosen);
        return chosen;
    }

    @Benchmark
    public EndpointState admit() {
        Future<EndpointState> slot = cluster.acquire(ImmediateEventExecutor.INSTANCE);
        EndpointState chosen = slot.getNow();
        cluster.release(chosen);
        return chosen;
    }
}
