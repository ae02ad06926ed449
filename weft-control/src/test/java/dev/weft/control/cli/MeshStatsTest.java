package dev.weft.control.cli;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class MeshStatsTest {

    private static final String BEFORE = """
            # HELP weft_route_requests_total Requests finished.
            # TYPE weft_route_requests_total counter
            weft_route_requests_total{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx"} 100
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx",le="0.01"} 50
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx",le="0.1"} 100
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx",le="+Inf"} 100
            weft_mesh_cpu_seconds_total{scope="process"} 1.5
            weft_mesh_heap_allocated_bytes_total{scope="process"} 1000000
            weft_mesh_hops_total 100
            """;
    private static final String AFTER = """
            weft_route_requests_total{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx"} 290
            weft_route_requests_total{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="5xx"} 10
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx",le="0.01"} 150
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx",le="0.1"} 290
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="2xx",le="+Inf"} 290
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="5xx",le="0.01"} 10
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="5xx",le="0.1"} 10
            weft_route_request_duration_seconds_bucket{direction="outbound",service="consumer",dst_service="provider",route="default",status_class="5xx",le="+Inf"} 10
            weft_requests_in_flight{service="consumer",direction="inbound"} 0
            weft_endpoint_in_flight{upstream="provider",endpoint="p1"} 3
            weft_upstream_queue_depth{upstream="provider"} 2
            weft_mesh_cpu_seconds_total{scope="process"} 1.54
            weft_mesh_heap_allocated_bytes_total{scope="process"} 1200000
            weft_mesh_hops_total 300
            """;

    @Test
    void ratesSuccessPercentilesInFlightAndTaxComeFromTheDifferenceBetweenTwoScrapes() {
        MeshStats.Report r = MeshStats.fromScrapes(
                List.of(new MeshStats.Scrape("consumer", "c1", PromText.parse(BEFORE))),
                List.of(new MeshStats.Scrape("consumer", "c1", PromText.parse(AFTER))), 2.0, new ArrayList<>());
        MeshStats.Row edge = r.edges().getFirst();
        assertThat(edge.name()).isEqualTo("consumer → provider");
        assertThat(edge.rps()).isEqualTo(100.0); // 200 requests in 2 s
        assertThat(edge.success()).isEqualTo(0.95); // 10 of the 200 were 5xx
        // 110 of 200 at or under 10 ms: the median sits in the first bucket, 100/110 of the way up.
        assertThat(edge.p50Millis()).isCloseTo(10.0 * 100 / 110, within(1e-9));
        assertThat(edge.p99Millis()).isCloseTo(10 + 90 * (198.0 - 110) / 90, within(1e-9));
        assertThat(edge.inFlight()).isEqualTo(5);
        MeshStats.Row service = r.services().getFirst();
        assertThat(service.name()).isEqualTo("consumer");
        assertThat(service.cpuMicrosPerRequest()).isCloseTo(200.0, within(1e-6)); // 0.04 s over 200 hops
        assertThat(service.heapBytesPerRequest()).isEqualTo(1000.0);
        assertThat(service.rps()).isZero();
        assertThat(service.success()).isNaN();
        assertThat(MeshStats.render(r)).contains("consumer → provider", "95.00%", "200 µs", "1000 B");
    }

    @Test
    void aRestartedSidecarsCountersCountFromZero() {
        MeshStats.Report r = MeshStats.fromScrapes(
                List.of(new MeshStats.Scrape("consumer", "c1", PromText.parse(AFTER))),
                List.of(new MeshStats.Scrape("consumer", "c1", PromText.parse(BEFORE))), 1.0, new ArrayList<>());
        assertThat(r.edges().getFirst().rps()).isEqualTo(100.0);
    }

    @Test
    void quantilesInterpolateLikePrometheus() {
        TreeMap<Double, Double> b = new TreeMap<>();
        b.put(0.1, 0.0);
        b.put(0.2, 100.0);
        b.put(Double.POSITIVE_INFINITY, 100.0);
        assertThat(MeshStats.quantile(b, 0.5)).isCloseTo(0.15, within(1e-12));
        b.put(Double.POSITIVE_INFINITY, 200.0);
        assertThat(MeshStats.quantile(b, 0.99)).as("beyond the last bound: the last bound").isEqualTo(0.2);
        assertThat(MeshStats.quantile(new TreeMap<>(), 0.5)).isNaN();
    }

    @Test
    void prometheusTextIsParsedWithEscapesAndSpecialValues() {
        List<PromText.Sample> s = PromText.parse("""
                # HELP x y
                a_total{k="v\\"q",e="line\\nnext"} 3 1700000000000
                b NaN
                c{le="+Inf"} +Inf
                """);
        assertThat(s).hasSize(3);
        assertThat(s.get(0).label("k")).isEqualTo("v\"q");
        assertThat(s.get(0).label("e")).isEqualTo("line\nnext");
        assertThat(s.get(0).value()).isEqualTo(3);
        assertThat(s.get(1).value()).isNaN();
        assertThat(s.get(2).value()).isInfinite();
    }

    @Test
    void fromSpansAFailuresSpanExportedAloneIsNotCountedAsASampleOfTheTraffic() {
        List<TraceSpan> trace = List.of(
                new TraceSpan("t1", "s1", null, "SERVER", "post", 1_000, 20_000, "b", null, java.util.Map.of(),
                        java.util.Map.of("http.status_code", "200")),
                new TraceSpan("t2", "s2", null, "SERVER", "post", 2_000, 5_000, "b", null, java.util.Map.of(),
                        java.util.Map.of("http.status_code", "503", "error", "no-capacity", "weft.sampling", "error")));
        MeshStats.Report r = MeshStats.fromTraces(List.of(trace), 10, new ArrayList<>());
        assertThat(r.services()).singleElement().satisfies(b -> {
            assertThat(b.rps()).isCloseTo(0.1, within(1e-9));
            assertThat(b.success()).isEqualTo(1.0);
        });
    }
}
