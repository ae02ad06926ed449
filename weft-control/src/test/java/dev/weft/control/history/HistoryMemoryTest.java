package dev.weft.control.history;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an hour of history costs at the scale the dashboard is built for: 200 services, 400 edges and 2,000 endpoints,
 * every series filled for all 720 ticks. The figure in docs/observability.md comes from this test's output.
 */
class HistoryMemoryTest {
    static final int SERVICES = 200;
    static final int EDGES = 400;
    static final int ENDPOINTS = 2000;

    private static long heapUsedAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    @Test
    void anHourOf200Services400EdgesAnd2000EndpointsTakesTheArraysItsFormulaSaysAndLittleMore() throws Exception {
        long before = heapUsedAfterGc();
        History h = new History();
        double[] values = new double[History.METRICS];
        Arrays.fill(values, 12.5);
        for (int t = 0; t < h.capacity(); t++) {
            h.beginTick(t * 5000L);
            for (int s = 0; s < SERVICES; s++) {
                h.put(History.Kind.SERVICE, "service-" + s, values);
            }
            for (int e = 0; e < EDGES; e++) {
                h.put(History.Kind.EDGE, "service-" + (e / 2) + " → service-" + ((e / 2 + 1 + e % 2) % SERVICES), values);
            }
            for (int n = 0; n < ENDPOINTS; n++) {
                h.put(History.Kind.ENDPOINT, "service-" + (n / 10) + "/instance-" + n, values);
            }
        }
        long after = heapUsedAfterGc();
        int series = SERVICES + EDGES + ENDPOINTS;
        assertThat(h.seriesCount()).isEqualTo(series);
        assertThat(h.droppedSeries()).isZero();
        long arrays = h.arrayBytes();
        assertThat(arrays).isEqualTo(720L * Long.BYTES + (long) series * History.METRICS * 720 * Float.BYTES);
        long measured = after - before;
        System.out.printf("history: %d series x %d ticks: arrays %.1f MB, measured heap delta %.1f MB (%d bytes per series)%n",
                series, h.capacity(), arrays / 1e6, measured / 1e6, measured / series);
        // The arrays are nearly all of it: keys, map entries and per-series headers add a few percent.
        assertThat(measured).isBetween(arrays * 9 / 10, arrays * 3 / 2);
        assertThat(h.read(History.Kind.ENDPOINT, "service-3/instance-35", 0).times()).hasSize(720);
    }
}
