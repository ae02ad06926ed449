package dev.weft.cli;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code HotPathBenchmark} set up and run for one short iteration by JMH itself, in its own JVM, on this module's
 * class path (where {@code dev.weft.cli.WeftCli}, the control plane it starts, lives): the benchmark starts a control
 * plane and two sidecars, and a change to what a sidecar needs to become ready (a join token since issue 13) once
 * stopped it at "ready did not answer 200" with nothing in CI to see it. Nothing here is timed.
 */
class HotPathBenchmarkRunsTest {
    @Test
    void theMeshBenchmarkStartsItsSidecarsAndCarriesRequests() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                "org.openjdk.jmh.Main", "HotPathBenchmark.mesh", "-p", "observability=on", "-f", "1", "-wi", "0",
                "-i", "1", "-r", "1s", "-foe", "true"))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("JMH ended").isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("HotPathBenchmark.mesh").containsPattern("per request: sidecar threads \\d")
                .doesNotContain("<failure>");
    }
}
