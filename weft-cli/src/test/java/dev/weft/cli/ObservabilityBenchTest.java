package dev.weft.cli;

import dev.weft.bench.ObservabilityCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A short {@code ./weft bench observability}: the real mesh as processes, one pair of windows on the same four
 * sidecars, observability on in one and paused in the other. The cost of so short a run is not asserted (its
 * windows are a second long on a shared machine); what is asserted is that both windows carried verified load, and
 * that every sidecar was really paused and resumed, as each one's log says.
 */
class ObservabilityBenchTest {
    @TempDir
    Path results;

    @Test
    void pausesAndResumesEverySidecarBetweenTwoWindowsOfOneTopology() throws Exception {
        int exit = new CommandLine(new ObservabilityCommand()).execute("--proxy-threads", "1", "--pairs", "1",
                "--window", "2s", "--gap", "1s", "--jit-settle", "0s", "--connections", "16", "--generator",
                "builtin", "--keep-logs", "--results", results.toString());
        assertThat(exit).isZero();

        List<String[]> rows = Files.readAllLines(results.resolve("windows.csv")).stream().skip(1)
                .map(l -> l.split(",", -1)).toList();
        assertThat(rows).extracting(r -> r[1]).containsExactly("on", "paused");
        for (String[] r : rows) {
            assertThat(Long.parseLong(r[11])).as("requests in the %s window", r[1]).isPositive();
            assertThat(Long.parseLong(r[12])).as("errors in the %s window", r[1]).isZero();
        }
        assertThat(Files.readString(results.resolve("observability.md"))).contains("## 1 Worker per sidecar")
                .contains("| 1 | on, off |").containsPattern("Median cost [+-]\\d");
        Path logs = results.resolve("logs").resolve("t1");
        for (String sidecar : List.of("consumer", "provider-small", "provider-medium", "provider-large")) {
            assertThat(Files.readString(logs.resolve("sidecar-" + sidecar + ".log"))).as(sidecar)
                    .contains("observability paused from the admin port")
                    .contains("observability resumed from the admin port");
        }
    }
}
