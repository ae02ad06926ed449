package dev.weft.dataplane.metrics;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

class PerThreadTest {

    @Test
    void eachThreadCountsInItsOwnCellAndTheSumIsEveryonesCount() throws Exception {
        TrafficMetrics m = new TrafficMetrics("outbound");
        int threads = 4;
        int each = 50_000;
        List<Thread> started = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            started.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < each; i++) {
                    m.started();
                    m.bytesIn(2);
                    m.finished(i % 2 == 0 ? 200 : 503, System.nanoTime(), System.nanoTime(), i % 2 == 1);
                }
            }));
        }
        go.countDown();
        for (Thread t : started) {
            t.join();
        }
        assertThat(m.requests(2)).isEqualTo(threads * each / 2);
        assertThat(m.requests(5)).isEqualTo(threads * each / 2);
        assertThat(m.meshErrors()).isEqualTo(threads * each / 2);
        assertThat(m.inFlight()).isZero();
        assertThat(m.bytesIn()).isEqualTo(2L * threads * each);
        assertThat(m.latency().getTotalCount()).isEqualTo((long) threads * each);
    }

    @Test
    void virtualThreadsShareOneCellUnderItsLockAndLoseNothing() throws Exception {
        RouteMetrics m = new RouteMetrics("consumer");
        RouteMetrics.Stats s = m.stats(false, "provider", "default");
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < 200; t++) {
            vts.add(Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 100; i++) {
                    s.record(200, 300, 1, 2, 1, null);
                }
            }));
        }
        for (Thread t : vts) {
            t.join();
        }
        assertThat(s.sum(2)).isEqualTo(20_000);
        long[] buckets = s.buckets(2);
        assertThat(buckets[2]).as("300 µs is at or below 0.5 ms").isEqualTo(20_000);
        assertThat(s.sumMicros(2)).isEqualTo(20_000L * 300);
        PrometheusText p = new PrometheusText();
        m.render(p);
        assertThat(p.toString()).contains("weft_route_retries_total{direction=\"outbound\",service=\"consumer\","
                + "dst_service=\"provider\",route=\"default\"} 20000\n");
    }

    @Test
    void threadsBeyondTheCapShareTheSharedCell() throws Exception {
        PerThread<long[]> cells = new PerThread<>(() -> new long[1]);
        List<long[]> seen = new ArrayList<>();
        for (int t = 0; t < PerThread.MAX_CELLS + 3; t++) {
            Thread th = Thread.ofPlatform().start(() -> {
                synchronized (seen) {
                    seen.add(cells.get());
                }
            });
            th.join();
        }
        assertThat(seen.stream().filter(cells::isShared).count()).isEqualTo(3);
        assertThat(seen.stream().distinct().count()).isEqualTo(PerThread.MAX_CELLS + 1);
    }
}
