package dev.weft.bench;

import dev.weft.dataplane.SidecarJvm;
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
    void theIssue13ProfileRunsTheTlsPlanesInBothSectionsAtIssue12sConditions() {
        Bench.Settings s = parse("--profile", "issue13");
        assertThat(s.planes()).containsExactly("weft-mtls", "weft-off", "haproxy-tls", "nginx-tls");
        assertThat(s.sections()).containsExactlyInAnyOrder("mesh", "hop");
        Bench.Settings issue12 = parse("--profile", "issue12");
        assertThat(s.generator()).isEqualTo(issue12.generator());
        assertThat(s.capacities()).isEqualTo(issue12.capacities());
        assertThat(s.proxyThreads()).containsExactly(1);
        assertThat(s.connections()).isEqualTo(issue12.connections());
        assertThat(List.of(s.warmup(), s.firstWarmup(), s.jitSettle(), s.duration()))
                .isEqualTo(List.of(issue12.warmup(), issue12.firstWarmup(), issue12.jitSettle(), issue12.duration()));
        assertThat(s.rounds()).isEqualTo(3);
    }

    @Test
    void theTlsPlanesAreWeftStrictWithTokensWeftOffAndThePeersWithTlsOnTheLink() {
        WeftDataPlane mtls = (WeftDataPlane) Bench.dataPlane("weft-mtls", List.of(), 1);
        assertThat(mtls.mtls()).isEqualTo("strict");
        assertThat(mtls.joinsWithToken()).isTrue();
        assertThat(mtls.threads()).isEqualTo(1);
        assertThat(mtls.description()).contains("--mtls strict with a join token per sidecar");
        WeftDataPlane off = (WeftDataPlane) Bench.dataPlane("weft-off", List.of());
        assertThat(off.mtls()).isEqualTo("off");
        assertThat(off.joinsWithToken()).isFalse();
        assertThat(((WeftDataPlane) Bench.dataPlane("weft", List.of())).mtls()).as("unchanged: the sidecar's default")
                .isNull();
        for (String name : List.of("haproxy-tls", "nginx-tls", "haproxy", "nginx", "caddy")) {
            PeerDataPlane peer = (PeerDataPlane) Bench.dataPlane(name, List.of(), 2);
            assertThat(peer.name()).isEqualTo(name);
            assertThat(peer.tls()).isEqualTo(name.endsWith("-tls"));
            assertThat(peer.threads()).isEqualTo(2);
        }
        assertThat(Bench.dataPlane("haproxy-tls", List.of()).description()).contains("mutual TLS 1.3");
        assertThat(Bench.link("weft-mtls")).isEqualTo("WMP over mutual TLS 1.3");
        assertThat(Bench.link("weft-off")).isEqualTo("WMP, plaintext (--mtls off)");
        assertThat(Bench.link("weft")).isEqualTo("WMP, plaintext (--mtls off; the join token only registers)");
        assertThat(Bench.link("nginx-tls")).isEqualTo("HTTP/1.1 over mutual TLS 1.3");
        assertThat(Bench.link("haproxy")).isEqualTo("HTTP/1.1, plaintext");
        assertThatThrownBy(() -> parse("--planes", "caddy-tls")).hasMessageContaining("unknown data plane 'caddy-tls'");
        assertThatThrownBy(() -> PeerDataPlane.named("caddy-tls")).hasMessageContaining("no TLS variant of caddy");
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
    void sidecarJvmOptionsAreReadAsTheSidecarsOptionsFileIs() {
        assertThat(parse().sidecarJvm()).isEqualTo(SidecarJvm.options());
        String options = "  -Xmx64m\t-Xss256k  # a comment, as in sidecar-jvm.options\n-XX:+UseSerialGC";
        assertThat(parse("--sidecar-jvm", options).sidecarJvm())
                .containsExactly("-Xmx64m", "-Xss256k", "-XX:+UseSerialGC");
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
        assertThatThrownBy(() -> parse("--profile", "paper")).hasMessage(
                "unknown profile 'paper' (expected issue12 or issue13)");
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
