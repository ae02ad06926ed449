package dev.weft.bench.observe;

import com.sun.net.httpserver.HttpServer;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.observe.HeaderAccess;
import dev.weft.dataplane.observe.Observability;
import dev.weft.dataplane.observe.ObservabilityConfig;
import dev.weft.protocol.WmpHeaders;
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
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What observability costs a Worker per request, alone: the calls the exchange core makes on one exchange (the
 * direction's counters, {@code start} with the trace headers, every step, {@code end}) against a real
 * {@link Observability} with metrics on and tracing by {@code sample} ({@code all}: every trace, the default until
 * session 10; {@code default}: the sidecar's default sampler, a reservoir of 200 traces a second, then 1 %), whose
 * exporter posts the spans to a collector on a loopback port. Run it with {@code -t 1} and {@code -t 2}: at two threads, whatever the Workers share (counters,
 * histograms, the span hand-over) shows as contention.
 *
 * <p>{@code side}: {@code consumer} starts each trace (no trace headers arrive, as from the example consumer);
 * {@code provider} continues one (a traceparent arrives, as over the mesh link). {@code export}: {@code on} posts
 * the spans; {@code off} measures propagation and metrics alone. With export on, the threads hand over spans far
 * faster than one exporter encodes and posts them (a sidecar makes some ten thousand a second, these hundreds of
 * thousands), so most are dropped as when a collector falls behind; the hand-over is still made for each, and the exporter's thread takes
 * one core of the two.
 *
 * <p>Not in {@code ./weft bench}'s JMH section (another package): run it with {@code java -cp
 * 'weft-cli/target/lib/*' org.openjdk.jmh.Main ObservabilityBenchmark -prof gc -t 2}. The collector drains each batch
 * into one reused buffer, so what {@code -prof gc} counts is the sidecar's allocation (Worker and exporter) and the
 * collector's per post, a few bytes per span.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Dio.netty.noUnsafe=false", "-XX:+UseSerialGC", "-Xmx256m"})
public class ObservabilityBenchmark {
    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Param({"consumer", "provider"})
    public String side;

    @Param({"on", "off"})
    public String export;

    @Param({"all", "default"})
    public String sample;

    private HttpServer collector;
    private Observability observability;
    private final TrafficMetrics traffic = new TrafficMetrics("outbound");
    private Direction direction;

    /** One Worker's request head, reused: the trace header is put back as it arrived before every request. */
    @State(Scope.Thread)
    public static class Head {
        final WmpHeaders fields = new WmpHeaders(8);
        /** The exchange core gives the observer the request head itself (it is the {@link HeaderAccess}). */
        final HeaderAccess access = new RequestHead("POST", "provider", "/", fields);
    }

    @Setup(Level.Trial)
    public void start() throws IOException {
        collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        byte[] sink = new byte[64 * 1024];
        collector.createContext("/api/v2/spans", ex -> {
            try (InputStream in = ex.getRequestBody()) {
                while (in.read(sink) >= 0) {
                    // drained
                }
            }
            ex.sendResponseHeaders(202, -1);
            ex.close();
        });
        collector.start();
        String endpoint = export.equals("on") ? "http://127.0.0.1:" + collector.getAddress().getPort()
                + "/api/v2/spans" : ObservabilityConfig.OFF;
        ObservabilityConfig config = new ObservabilityConfig(true, true,
                sample.equals("all") ? 1.0 : ObservabilityConfig.DEFAULT_TRACE_SAMPLE,
                ObservabilityConfig.DEFAULT_TRACE_RESERVOIR, endpoint, "zipkin",
                EnumSet.of(ObservabilityConfig.Propagation.W3C), Map.of(), List.of());
        observability = new Observability(config, side, null, () -> 0);
        observability.open(List.of());
        direction = side.equals("consumer") ? Direction.OUTBOUND : Direction.INBOUND;
    }

    @TearDown(Level.Trial)
    public void stop() {
        observability.close();
        collector.stop(0);
    }

    @Benchmark
    public int request(Head head) {
        WmpHeaders h = head.fields;
        h.remove("traceparent");
        h.set("content-type", "application/x-www-form-urlencoded");
        if (direction == Direction.INBOUND) {
            h.set("traceparent", TRACEPARENT);
        }
        long start = System.nanoTime();
        traffic.started();
        ExchangeTrace t = observability.start(direction, side, "POST", "/", head.access, "/127.0.0.1:40000", start);
        t.routed("provider", null);
        t.admitted("provider", "provider-1", "127.0.0.1:7001");
        t.connected();
        t.sent(System.nanoTime());
        t.firstByte(200);
        traffic.bytesIn(32);
        traffic.bytesOut(10);
        long end = System.nanoTime(); // as ProxyExchange.over: one reading for both
        t.end(200, 32, 10, null, end);
        traffic.finished(200, start, end, false);
        return h.size();
    }
}
