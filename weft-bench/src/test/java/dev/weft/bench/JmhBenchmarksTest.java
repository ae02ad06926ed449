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
                new JmhRunner.Result("HotPathBenchmark.direct", "", 30_000, 100, 900),
                new JmhRunner.Result("HotPathBenchmark.mesh", "", 90_000, 300, 2900)));
        assertThat(rows.getLast()).isEqualTo(new JmhRunner.Result("HotPathBenchmark.perHop", "(mesh - direct) / 2",
                30_000, 200, 1000));
    }
}
