package dev.weft.bench;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExperimentTest {
    @TempDir
    Path runDir;

    private ExperimentSettings shortRun() {
        return ExperimentSettings.defaults()
                .withMainClass(FakeMeshCli.class.getName())
                .withRunDir(runDir)
                .withConnections(24)
                .withLoadThreads(1)
                .withWarmup(Duration.ofMillis(500))
                .withDuration(Duration.ofMillis(1500))
                .withStartTimeout(Duration.ofSeconds(30))
                // Eight fresh JVMs on a small shared machine: slow answers are expected, lost ones are not.
                .withLoadTimeout(Duration.ofSeconds(20));
    }

    @Test
    void runsTheWholeTopologyAsProcessesReportsEachProvidersShareAndDeletesItsLogs() throws Exception {
        Path dir = runDir.resolve("run");
        ExperimentResult result = Experiment.run(shortRun().withRunDir(dir));
        System.out.print(result.describe());

        assertThat(result.load().errors().total()).as(result.load().errors().describe()).isZero();
        assertThat(result.load().successes()).isPositive();
        assertThat(result.providers()).extracting(ExperimentResult.ProviderShare::name)
                .containsExactly("small", "medium", "large");
        assertThat(result.providers()).allSatisfy(p -> assertThat(p.served()).isPositive());
        assertThat(result.providers().stream().mapToLong(ExperimentResult.ProviderShare::served).sum())
                .isGreaterThanOrEqualTo(result.load().successes());
        assertThat(result.providers().stream().mapToDouble(ExperimentResult.ProviderShare::share).sum())
                .isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(result.providers()).extracting(ExperimentResult.ProviderShare::weightShare)
                .containsExactly(1 / 6.0, 2 / 6.0, 3 / 6.0);
        assertThat(result.describe()).contains("medium").contains("33.3%");
        assertThat(result.logsKept()).isFalse();
        assertThat(dir).doesNotExist();
    }

    @Test
    void givesEachProviderItsOwnCapacityAndItsSidecarTheWorkersAskedForUnderWrk() throws Exception {
        Assumptions.assumeTrue(PeerDataPlane.onPath("wrk"), "wrk is not installed (apt-get install -y wrk)");
        Path dir = runDir.resolve("run");
        ExperimentResult result = Experiment.run(shortRun().withRunDir(dir).withKeepLogs(true)
                .withProviderCapacities(List.of(10, 20, 30)).withGenerator(Generator.WRK)
                .withDataPlane(WeftDataPlane.defaults().withThreads(1)).withDuration(Duration.ofSeconds(1)));

        assertThat(result.load().errors().total()).as(result.load().errors().describe()).isZero();
        assertThat(result.load().successes()).isPositive();
        assertThat(result.providers()).allSatisfy(p -> assertThat(p.served()).isPositive());
        assertThat(Files.readString(dir.resolve("provider-small.log"))).contains("--max-concurrency 10 ");
        assertThat(Files.readString(dir.resolve("provider-large.log"))).contains("--max-concurrency 30 ");
        assertThat(Files.readString(dir.resolve("sidecar-provider-medium.log")))
                .contains("--weight 2 --capacity 20 ").contains("--workers 1");
        assertThat(Files.readString(dir.resolve("sidecar-consumer.log"))).contains("--workers 1");
        assertThat(dir.resolve("wrk-24-measured.log")).content().contains("weft-wrk verified=");
    }

    @Test
    void namesTheProcessThatFailedToStartAndShowsItsLog() throws Exception {
        assertThatThrownBy(() -> Experiment.run(shortRun().withMainClass("dev.weft.bench.NoSuchMain")))
                .isInstanceOf(ExperimentException.class)
                .hasMessageContaining("control plane (pid ")
                .hasMessageContaining("exited with code 1 before printing 'weft control listening on HOST:PORT'")
                .hasMessageContaining("NoSuchMain")
                .hasMessageContaining(runDir.resolve("control.log").toString());
        // The log starts with the command line, so a failed start can be repeated by hand.
        assertThat(Files.readString(runDir.resolve("control.log"))).startsWith("# ").contains(" control --listen ");
    }

    @Test
    void runsTheControlPlaneOnAnExternalRegistryAndGivesTheSidecarsBoth() throws Exception {
        // Nothing listens on port 1, so the fake sidecar cannot register; what matters is that the control plane was
        // started on the given registry, and that the sidecar got the registry and the control plane for its spans.
        assertThatThrownBy(() -> Experiment.run(shortRun().withRegistry("weft://127.0.0.1:1")
                .withStartTimeout(Duration.ofSeconds(15))))
                .isInstanceOf(ExperimentException.class)
                .hasMessageContaining("sidecar-provider-small");
        assertThat(Files.readString(runDir.resolve("control.log"))).contains("control --listen 127.0.0.1:0"
                + " --registry weft://127.0.0.1:1");
        assertThat(Files.readString(runDir.resolve("sidecar-provider-small.log")))
                .contains("--registry weft://127.0.0.1:1")
                .containsPattern("--trace-endpoint http://127\\.0\\.0\\.1:\\d+/api/v2/spans");
    }
}
