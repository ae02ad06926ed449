package dev.weft.dataplane.metrics;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RouteMetricsTest {

    @Test
    void requestsAreCountedPerDirectionDestinationRouteAndStatusClass() {
        RouteMetrics m = new RouteMetrics("consumer");
        m.stats(false, "provider", "default").record(200, 800, 5, 9, 0, null);
        m.stats(false, "provider", "default").record(204, 3_000, 0, 0, 1, null);
        m.stats(false, "provider", "default").record(503, 40, 0, 0, 0, "no-capacity");
        m.stats(true, "consumer", "users").record(404, 120_000, 0, 0, 0, null);
        PrometheusText p = new PrometheusText();
        m.render(p);
        String text = p.toString();

        assertThat(text).contains("weft_route_requests_total{direction=\"outbound\",service=\"consumer\","
                + "dst_service=\"provider\",route=\"default\",status_class=\"2xx\"} 2\n");
        assertThat(text).contains("status_class=\"5xx\"} 1\n");
        assertThat(text).contains("weft_route_requests_total{direction=\"inbound\",service=\"consumer\","
                + "dst_service=\"consumer\",route=\"users\",status_class=\"4xx\"} 1\n");
        // Cumulative buckets: the 0.8 ms request is at or below 1 ms, the 3 ms one only from 5 ms.
        assertThat(text).contains("route=\"default\",status_class=\"2xx\",le=\"0.001\"} 1\n");
        assertThat(text).contains("route=\"default\",status_class=\"2xx\",le=\"0.0025\"} 1\n");
        assertThat(text).contains("route=\"default\",status_class=\"2xx\",le=\"0.005\"} 2\n");
        assertThat(text).contains("route=\"default\",status_class=\"2xx\",le=\"+Inf\"} 2\n");
        assertThat(text).contains("weft_route_request_duration_seconds_count{direction=\"outbound\",service=\"consumer\","
                + "dst_service=\"provider\",route=\"default\",status_class=\"2xx\"} 2\n");
        assertThat(text).contains("weft_route_retries_total{direction=\"outbound\",service=\"consumer\","
                + "dst_service=\"provider\",route=\"default\"} 1\n");
        assertThat(text).contains("kind=\"no-capacity\"} 1\n");
        assertThat(text).contains("flow=\"in\"} 5\n");
        // One HELP/TYPE per family, however many series.
        assertThat(text.split("# TYPE weft_route_requests_total ", -1)).hasSize(2);
    }

    @Test
    void destinationsBeyondTheCapShareTheOtherSeries() {
        RouteMetrics m = new RouteMetrics("consumer");
        for (int i = 0; i < RouteMetrics.MAX_DESTINATIONS + 100; i++) {
            m.stats(false, "svc-" + i, "default").record(200, 10, 0, 0, 0, null);
        }
        PrometheusText p = new PrometheusText();
        m.render(p);
        long series = p.toString().lines().filter(l -> l.startsWith("weft_route_requests_total{")).count();
        assertThat(series).isEqualTo(RouteMetrics.MAX_DESTINATIONS + 1);
        assertThat(p.toString()).contains("dst_service=\"other\",route=\"default\",status_class=\"2xx\"} 100\n");
    }

    @Test
    void theHistogramRendersSecondsWithTheSumOfObservations() {
        LatencyHistogram h = new LatencyHistogram();
        h.record(50);
        h.record(20_000_000);
        PrometheusText p = new PrometheusText();
        p.histogram("x_seconds", "help", h, "a", "b");
        assertThat(p.toString()).contains("x_seconds_bucket{a=\"b\",le=\"0.0001\"} 1\n")
                .contains("x_seconds_bucket{a=\"b\",le=\"10\"} 1\n")
                .contains("x_seconds_bucket{a=\"b\",le=\"+Inf\"} 2\n")
                .contains("x_seconds_sum{a=\"b\"} 20.00005\n")
                .contains("x_seconds_count{a=\"b\"} 2\n");
    }

    @Test
    void aSumPastAMillionSecondsStillMovesAndNonNumbersAreSpelledAsPrometheusReadsThem() {
        long[] counts = new long[LatencyHistogram.LE.length + 1];
        PrometheusText p = new PrometheusText();
        // A day at a few hundred requests a second: six significant digits wrote both as 1.00000e+06.
        p.histogram("y_seconds", "help", counts, 1_000_000_000_000L, "a", "b");
        p.histogram("z_seconds", "help", counts, 1_000_000_050_000L, "a", "b");
        p.gauge("g_nan", "help", Double.NaN).gauge("g_inf", "help", Double.POSITIVE_INFINITY)
                .gauge("g_minus_inf", "help", Double.NEGATIVE_INFINITY).gauge("g_tiny", "help", 0.00001234);
        assertThat(p.toString()).contains("y_seconds_sum{a=\"b\"} 1000000\n")
                .contains("z_seconds_sum{a=\"b\"} 1000000.05\n")
                .contains("g_nan NaN\n").contains("g_inf +Inf\n").contains("g_minus_inf -Inf\n")
                .contains("g_tiny 1.234E-5\n");
    }
}
