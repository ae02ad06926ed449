package dev.weft.protocol;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WmpCodecMetricsTest {

    @Test
    void counters_shared_by_many_threads_lose_no_update() throws InterruptedException {
        WmpCodecMetrics metrics = new WmpCodecMetrics();
        int threads = 4;
        int perThread = 50_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    metrics.frameIn(10);
                    metrics.frameOut(3);
                    metrics.error(WmpDecodeError.values()[i % WmpDecodeError.values().length]);
                }
            }));
        }
        start.countDown();
        for (Thread w : workers) {
            assertThat(w.join(Duration.ofSeconds(30))).isTrue();
        }
        long total = (long) threads * perThread;
        assertThat(metrics.framesIn()).isEqualTo(total);
        assertThat(metrics.bytesIn()).isEqualTo(total * 10);
        assertThat(metrics.framesOut()).isEqualTo(total);
        assertThat(metrics.bytesOut()).isEqualTo(total * 3);
        assertThat(metrics.totalErrors()).isEqualTo(total);
        long byKind = 0;
        for (WmpDecodeError kind : WmpDecodeError.values()) {
            byKind += metrics.errors(kind);
        }
        assertThat(byKind).isEqualTo(total);
    }

    @Test
    void to_string_shows_only_the_errors_that_happened() {
        WmpCodecMetrics metrics = new WmpCodecMetrics();
        metrics.frameIn(24);
        metrics.error(WmpDecodeError.BAD_MAGIC);
        assertThat(metrics.toString())
                .isEqualTo("WmpCodecMetrics{framesIn=1, framesOut=0, bytesIn=24, bytesOut=0, BAD_MAGIC=1}");
    }
}
