package dev.weft.cli;

import dev.weft.bench.SoakCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A short {@code ./weft bench soak}: the real topology as processes, every Weft sidecar read at each interval. The
 * verdict of so short a run is not asserted (a fresh JVM's memory grows in its first minute, drift or not); what is
 * asserted is that every reading of every sidecar is real and the three result files say so.
 */
class SoakTest {
    @TempDir
    Path results;

    @Test
    void readsEverySidecarsMemoryHeapDescriptorsAndThreadsAtEachIntervalAndWritesTheChart() throws Exception {
        int exit = new CommandLine(new SoakCommand()).execute("--duration", "20s", "--interval", "5s",
                "--connections", "32", "--warmup", "0s", "--results", results.toString());
        assertThat(exit).as("0 (no drift) or 1 (drift): not a usage error or a failed start").isIn(0, 1);

        List<String> csv = Files.readAllLines(results.resolve("soak.csv"));
        assertThat(csv.getFirst()).isEqualTo("seconds,sidecar,rss_bytes,heap_after_full_gc_bytes,open_fds,threads");
        List<String[]> rows = csv.stream().skip(1).map(l -> l.split(",")).toList();
        assertThat(rows.stream().map(r -> r[1]).distinct())
                .as("the three provider-side sidecars and the consumer's")
                .containsExactlyInAnyOrder("sidecar-provider-small", "sidecar-provider-medium",
                        "sidecar-provider-large", "sidecar-consumer");
        // A round starts 5 s after the last one ended, and its four jcmd JVMs can take 10 s on a busy 2-core machine.
        assertThat(rows).as("at least two rounds of 4 sidecars in 20 s").hasSizeGreaterThanOrEqualTo(8);
        for (String[] r : rows) {
            long rss = Long.parseLong(r[2]);
            long heap = Long.parseLong(r[3]);
            long fds = Long.parseLong(r[4]);
            long threads = Long.parseLong(r[5]);
            assertThat(rss).as("resident memory of %s", r[1]).isBetween(16L << 20, 1L << 30);
            assertThat(heap).as("heap after the forced full collection of %s", r[1]).isBetween(1L << 20, 256L << 20);
            assertThat(fds).as("open descriptors of %s", r[1]).isGreaterThan(10);
            assertThat(threads).as("threads of %s", r[1]).isGreaterThan(5);
        }
        String md = Files.readString(results.resolve("soak.md"));
        assertThat(md).contains("| sidecar-consumer | resident memory |").contains("| sidecar-consumer | threads |");
        assertThat(Files.readString(results.resolve("soak.svg"))).startsWith("<svg").contains("<polyline")
                .contains("sidecar-provider-large");
    }
}
