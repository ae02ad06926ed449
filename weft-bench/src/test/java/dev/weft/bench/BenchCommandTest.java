package dev.weft.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BenchCommandTest {
    private static Bench.Settings parse(String... args) {
        BenchCommand command = new BenchCommand();
        new CommandLine(command).parseArgs(args);
        return command.settings();
    }

    @Test
    void theIssue12ProfileIsThatIssuesMeasuringConditions() {
        Bench.Settings s = parse("--profile", "issue12");
        assertThat(s.generator()).isEqualTo(Generator.WRK);
        assertThat(s.capacities()).containsExactly(100, 200, 300);
        assertThat(s.proxyThreads()).containsExactly(1);
        assertThat(s.warmup()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.firstWarmup()).isZero();
        assertThat(s.duration()).isEqualTo(Duration.ofSeconds(20));
        assertThat(s.rounds()).isEqualTo(3);
        assertThat(s.connections()).containsExactly(512);
        assertThat(s.sections()).containsExactly("mesh");
        assertThat(s.planes()).containsExactly("weft", "weft-bare", "haproxy", "nginx");
    }

    @Test
    void optionsGivenWithAProfileOverrideIt() {
        Bench.Settings s = parse("--profile", "issue12", "--proxy-threads", "1,2", "--warmup", "5s", "--rounds", "1",
                "--planes", "weft,haproxy");
        assertThat(s.proxyThreads()).containsExactly(1, 2);
        assertThat(s.warmup()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.rounds()).isEqualTo(1);
        assertThat(s.planes()).containsExactly("weft", "haproxy");
        assertThat(s.generator()).isEqualTo(Generator.WRK);
    }

    @Test
    void withoutAProfileTheDefaultsAreWhatTheyWere() {
        Bench.Settings s = parse();
        assertThat(s.generator()).isEqualTo(Generator.BUILTIN);
        assertThat(s.capacities()).containsExactly(200, 200, 200);
        assertThat(s.proxyThreads()).isEmpty();
        assertThat(s.connections()).containsExactly(128, 256, 512);
        assertThat(s.sections()).containsExactlyInAnyOrder("mesh", "hop", "jmh");
        assertThat(s.warmup()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.hopConnections()).isEqualTo(64);
        assertThat(s.providerDelay()).isEqualTo(Duration.ofMillis(50));
    }

    @Test
    void aShorterProviderDelayRaisesTheCeilingOfTheMeshExperiment() {
        assertThat(parse("--profile", "issue12", "--provider-delay", "10ms").providerDelay())
                .isEqualTo(Duration.ofMillis(10));
        assertThat(parse("--provider-delay", "0s").providerDelay()).isZero();
    }

    @Test
    void mistakesAreNamedWithWhatWasExpected() {
        assertThatThrownBy(() -> parse("--generator", "ab")).hasMessage(
                "unknown load generator 'ab' (expected builtin or wrk)");
        assertThatThrownBy(() -> parse("--profile", "paper")).hasMessage("unknown profile 'paper' (expected issue12)");
        assertThatThrownBy(() -> parse("--capacities", "100,200")).hasMessageContaining("capacities must be 3 positive");
        assertThatThrownBy(() -> parse("--proxy-threads", "0")).hasMessageContaining("proxy threads must be positive");
        assertThatThrownBy(() -> parse("--quick", "--profile", "issue12")).hasMessageContaining("cannot be combined");
    }

    @Test
    void everyPlaneRunsAtEachThreadCountOnceAndPlanesWithAFixedCountOnlyOnce() {
        assertThat(Bench.runs(List.of("direct", "weft", "weft-1w", "haproxy"), List.of(1, 2))).containsExactly(
                new Bench.PlaneRun("direct", DataPlane.NO_PROXY_THREADS), new Bench.PlaneRun("weft", 1),
                new Bench.PlaneRun("weft-1w", 1), new Bench.PlaneRun("haproxy", 1), new Bench.PlaneRun("weft", 2),
                new Bench.PlaneRun("haproxy", 2));
        assertThat(Bench.runs(List.of("weft", "nginx"), List.of())).containsExactly(
                new Bench.PlaneRun("weft", DataPlane.OWN_DEFAULT_THREADS),
                new Bench.PlaneRun("nginx", DataPlane.OWN_DEFAULT_THREADS));
    }

    @Test
    void aWeftPlaneOnNThreadsStartsItsSidecarsWithThatManyWorkers() {
        DataPlane weft = Bench.dataPlane("weft", List.of(), 2);
        assertThat(weft.threads()).isEqualTo(2);
        assertThat(weft.description()).contains("--workers 2");
        assertThat(Bench.dataPlane("weft", List.of(), 0).description()).contains("the sidecar's default Workers");
        assertThat(Bench.dataPlane("weft-1w", List.of(), 2).threads()).isEqualTo(1);
    }
}
