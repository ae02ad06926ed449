package dev.weft.dataplane.observe;

import com.sun.net.httpserver.HttpServer;
import dev.weft.dataplane.metrics.PrometheusText;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.dataplane.observe.ObservabilityConfig.Propagation;
import io.netty.channel.DefaultEventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link Observability} with the sampler: what is not sampled is not exported, except a failure's span alone (marked
 * so), and the decisions are counted on /metrics; a record nothing reads once its exchange ended is recorded on again
 * by the Worker's next exchange, on a real event loop, after the task that ended it.
 */
class ObservabilitySamplingTest {
    private final List<String> posted = new CopyOnWriteArrayList<>();
    private HttpServer collector;
    private Observability observability;
    private DefaultEventLoop loop;

    @AfterEach
    void stop() throws Exception {
        if (observability != null) {
            observability.close();
        }
        if (collector != null) {
            collector.stop(0);
        }
        if (loop != null) {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        }
    }

    /** A reservoir of one trace a second (and one failure's span), nothing beyond it. */
    private static ObservabilityConfig oneASecond(String endpoint) {
        return new ObservabilityConfig(true, true, 0.0, 1, endpoint, "zipkin", Set.of(Propagation.W3C), Map.of(),
                List.of());
    }

    private static ObservedExchange start(Observability o, MapHeaders h) {
        return (ObservedExchange) o.start(Direction.OUTBOUND, "consumer", "GET", "/", h, "127.0.0.1:1", System.nanoTime());
    }

    /** The app's request carrying a caller's "not sampled", which is honoured and takes no token. */
    private static MapHeaders notSampled(String trace) {
        return new MapHeaders().with("traceparent", "00-" + trace + "-00f067aa0ba902b7-00");
    }

    @Test
    void anUnsampledFailureIsExportedAloneAndMarkedAndEveryDecisionIsCounted() throws Exception {
        collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/api/v2/spans", ex -> {
            posted.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            ex.sendResponseHeaders(202, -1);
            ex.close();
        });
        collector.start();
        observability = new Observability(oneASecond("http://127.0.0.1:" + collector.getAddress().getPort()
                + "/api/v2/spans"), "consumer", null, () -> 0);
        observability.open(List.of());

        ObservedExchange root = start(observability, new MapHeaders()); // the reservoir's one token
        root.end(200, 0, 2, null, System.nanoTime());
        MapHeaders okHeaders = notSampled("0af7651916cd43dd8448eb211c80319c");
        ObservedExchange ok = start(observability, okHeaders);
        assertThat(okHeaders.get("traceparent")).as("the decision still travels").endsWith("-00");
        ok.end(200, 0, 2, null, System.nanoTime());
        ObservedExchange failed = start(observability, notSampled("4bf92f3577b34da6a3ce929d0e0e4736"));
        failed.routed("provider", null);
        failed.end(503, 0, 0, "no-capacity", System.nanoTime());

        await().atMost(Duration.ofSeconds(10)).until(() -> String.join("", posted).contains(failed.traceIdHex())
                && String.join("", posted).contains(root.traceIdHex()));
        String body = String.join("", posted);
        assertThat(body).doesNotContain("0af7651916cd43dd8448eb211c80319c");
        assertThat(body.split("\"weft.sampling\":\"error\"", -1)).as("one span marked").hasSize(2);
        assertThat(body.substring(body.indexOf("4bf92f3577b34da6a3ce929d0e0e4736"))).contains("\"weft.error\":\"no-capacity\"",
                "\"weft.sampling\":\"error\"");

        PrometheusText p = new PrometheusText();
        observability.render(p);
        assertThat(p.toString()).contains("weft_trace_sampled_total{reason=\"reservoir\"} 1",
                "weft_trace_sampled_total{reason=\"error\"} 1", "weft_trace_sampled_total{reason=\"caller\"} 0",
                "weft_trace_not_sampled_total 2", "weft_trace_capped_total{what=\"error\"} 0",
                "weft_spans_sampled_total 2");
    }

    @Test
    void aRecordNothingReadsIsRecordedOnAgainByTheLoopsNextExchangeAfterTheTaskThatEndedIt() throws Exception {
        observability = new Observability(oneASecond(ObservabilityConfig.OFF), "consumer", null, () -> 0);
        observability.open(List.of());
        loop = new DefaultEventLoop();

        String[] traces = new String[2];
        ObservedExchange[] inTask = loop.submit(() -> {
            ObservedExchange first = start(observability, new MapHeaders());
            first.admitted("provider", "provider-1", "127.0.0.1:7001");
            first.end(502, 3, 4, "upstream-reset", System.nanoTime());
            // Pipelined: the next request opens inside the task that ended the first, which must not get its record.
            ObservedExchange second = start(observability, new MapHeaders());
            second.end(200, 0, 0, null, System.nanoTime());
            traces[0] = first.traceIdHex();
            traces[1] = second.traceIdHex();
            return new ObservedExchange[] {first, second};
        }).get(5, TimeUnit.SECONDS);
        assertThat(inTask[1]).isNotSameAs(inTask[0]);

        ObservedExchange later = loop.submit(() -> start(observability, new MapHeaders())).get(5, TimeUnit.SECONDS);
        assertThat(later).isIn((Object[]) inTask);
        assertThat(later.endNanos).isZero();
        assertThat(later.status).isZero();
        assertThat(later.error).isNull();
        assertThat(later.endpointId).isNull();
        assertThat(later.attempts).isZero();
        assertThat(later.destination).isEqualTo(ObservedExchange.UNKNOWN);
        assertThat(later.traceIdHex()).isNotIn((Object[]) traces);

        // A thread that runs no event loop keeps none.
        ObservedExchange off = start(observability, new MapHeaders());
        off.end(200, 0, 0, null, System.nanoTime());
        assertThat(start(observability, new MapHeaders())).isNotSameAs(off);
    }

    @Test
    void aWorkerAlternatingBetweenDestinationsAndRoutesCountsEachExchangeWhereItWent() throws Exception {
        // The Worker keeps the route cell it wrote last (WorkerCells): a change of destination, route or direction
        // must move to the right cell, on a loop's own cells and on a virtual thread's shared one alike.
        observability = new Observability(oneASecond(ObservabilityConfig.OFF), "consumer", null, () -> 0);
        observability.open(List.of());
        loop = new DefaultEventLoop();
        String[][] sequence = {{"a", null}, {"a", null}, {"b", null}, {"a", "writes"}, {"a", "writes"}, {"a", null},
                {"in", null}};
        Runnable run = () -> {
            for (String[] step : sequence) {
                boolean inbound = step[0].equals("in");
                ExchangeTrace x = observability.start(inbound ? Direction.INBOUND : Direction.OUTBOUND, "consumer",
                        "GET", "/", new MapHeaders(), "127.0.0.1:1", System.nanoTime());
                if (!inbound) {
                    x.routed(step[0], step[1]);
                    x.admitted(step[0], step[0] + "-1", "127.0.0.1:7001");
                }
                x.end(200, 1, 2, null, System.nanoTime());
            }
        };
        loop.submit(run).get(5, TimeUnit.SECONDS);
        Thread virtual = Thread.ofVirtual().start(run);
        virtual.join(5_000);

        PrometheusText p = new PrometheusText();
        observability.render(p);
        String series = "weft_route_requests_total{direction=\"%s\",service=\"consumer\",dst_service=\"%s\",route=\"%s\","
                + "status_class=\"2xx\"} %d";
        assertThat(p.toString()).contains(series.formatted("outbound", "a", RouteTable.DEFAULT, 6),
                series.formatted("outbound", "b", RouteTable.DEFAULT, 2), series.formatted("outbound", "a", "writes", 4),
                series.formatted("inbound", "consumer", RouteTable.DEFAULT, 2));
    }

    @Test
    void theStepsBetweenArrivalAndEndAreTimedOnlyForASampledExchange() {
        observability = new Observability(oneASecond(ObservabilityConfig.OFF), "consumer", null, () -> 0);
        observability.open(List.of());
        ObservedExchange sampled = start(observability, new MapHeaders()); // the reservoir's one token
        ObservedExchange not = start(observability, new MapHeaders());
        for (ObservedExchange x : new ObservedExchange[] {sampled, not}) {
            x.admitted("provider", "provider-1", "127.0.0.1:7001");
            x.connected();
            x.sent(System.nanoTime());
            x.firstByte(200);
        }
        assertThat(sampled.isSampled()).isTrue();
        assertThat(new long[] {sampled.admittedNanos, sampled.connectedNanos, sampled.firstByteNanos})
                .doesNotContain(0L);
        assertThat(not.isSampled()).isFalse();
        // Nothing shows them (no span, no log line), so no clock was read; the sent time is the exchange's own.
        assertThat(new long[] {not.admittedNanos, not.connectedNanos, not.firstByteNanos}).containsOnly(0L);
        assertThat(not.sentNanos).isNotZero();
        assertThat(not.attempts).isEqualTo(1);
        assertThat(not.upstreamStatus).isEqualTo(200);
    }
}
