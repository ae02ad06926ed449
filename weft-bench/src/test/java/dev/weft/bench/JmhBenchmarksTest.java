package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class JmhBenchmarksTest {
    /** javac on JDK 23+ skips processors found on the class path: without the POM's processor path this list is empty. */
    @Test
    void theAnnotationProcessorGeneratedEveryBenchmark() throws Exception {
        String list;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/BenchmarkList")) {
            assertThat(in).as("META-INF/BenchmarkList").isNotNull();
            list = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(list).contains("CodecBenchmark_encodeRequestHead", "CodecBenchmark_decodeRequest",
                "BalancerBenchmark_pick", "BalancerBenchmark_admit", "HotPathBenchmark_mesh", "HotPathBenchmark_direct");
    }

    @Test
    void derivesThePerHopShareOfTheHotPath() {
        List<JmhRunner.Result> rows = JmhRunner.withPerHop(List.of(
                new JmhRunner.Result("HotPathBenchmark.direct", "observability=off", 30_000, 100, 900),
                new JmhRunner.Result("HotPathBenchmark.direct", "observability=on", 31_000, 100, 950),
                new JmhRunner.Result("HotPathBenchmark.mesh", "observability=off", 90_000, 300, 2900),
                new JmhRunner.Result("HotPathBenchmark.mesh", "observability=on", 101_000, 300, 4950)));
        assertThat(rows.subList(4, rows.size())).containsExactly(
                new JmhRunner.Result("HotPathBenchmark.perHop", "observability=off, (mesh - direct) / 2",
                        30_000, 200, 1000),
                new JmhRunner.Result("HotPathBenchmark.perHop", "observability=on, (mesh - direct) / 2",
                        35_000, 200, 2000));
    }
}
