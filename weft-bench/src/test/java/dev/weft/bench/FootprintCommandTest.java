package dev.weft.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code weft bench footprint}'s options and report. A real run is not tested here: it starts {@code weft control},
 * an app and sidecars through {@code dev.weft.cli.WeftCli}, which is in weft-cli (a module that depends on this one),
 * and one start takes about a second of CPU; docs/benchmarks.md has the runs.
 */
class FootprintCommandTest {
    private static FootprintCommand parse(String... args) {
        FootprintCommand command = new FootprintCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    private static FootprintBench.Settings settings(int starts, List<List<String>> variants) {
        return new FootprintBench.Settings(starts, 3, Duration.ofSeconds(60), Path.of("/tmp"), line -> { }, variants,
                "off");
    }

    private static Duration ms(long millis) {
        return Duration.ofMillis(millis);
    }

    @Test
    void withoutSidecarJvmAddTheOnlyVariantIsTheSidecarAsShipped() {
        FootprintCommand c = parse();
        assertThat(c.starts).isEqualTo(10);
        assertThat(c.services).isEqualTo(1000);
        assertThat(c.startTimeout).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.variants()).containsExactly(List.of());
        assertThat(c.mtls).isEqualTo("off");
        assertThat(parse("--mtls", "strict").mtls).isEqualTo("strict");
    }

    @Test
    void anMtlsModeOtherThanOffOrStrictIsRefusedWithWhatWasExpected() throws Exception {
        FootprintCommand c = parse("--mtls", "permissive");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream before = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertThat(c.call()).isEqualTo(2);
        } finally {
            System.setErr(before);
        }
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("unknown --mtls 'permissive' (expected: off, strict)");
    }

    @Test
    void eachSidecarJvmAddIsOneVariantParsedAsTheOptionsFileIs() {
        FootprintCommand c = parse("--starts", "4", "--sidecar-jvm-add", "", "--sidecar-jvm-add",
                " -XX:TieredStopAtLevel=1   -Xss256k # why", "--sidecar-jvm-add", "-XX:-UsePerfData");
        assertThat(c.variants()).containsExactly(List.of(), List.of("-XX:TieredStopAtLevel=1", "-Xss256k"),
                List.of("-XX:-UsePerfData"));
        FootprintBench.Settings s = settings(c.starts, c.variants());
        assertThat(s.label(0)).isEqualTo("as shipped");
        assertThat(s.label(1)).isEqualTo("-XX:TieredStopAtLevel=1 -Xss256k");
    }

    @Test
    void settingsWithoutAnyVariantAreRefused() {
        assertThatThrownBy(() -> settings(1, List.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one variant");
    }

    @Test
    void withTwoVariantsTheReportListsEveryStartAndEachVariantsMedianAndRange() {
        FootprintBench.Settings s = settings(3, List.of(List.of(), List.of("-XX:TieredStopAtLevel=1")));
        List<FootprintBench.Start> starts = new ArrayList<>();
        long[][] readyCpuJit = {{900, 1200, 700}, {600, 800, 300}, {700, 1100, 600}, {650, 700, 250},
                {800, 1300, 750}, {500, 900, 350}};
        for (int i = 0; i < readyCpuJit.length; i++) {
            starts.add(new FootprintBench.Start(i % 2, ms(readyCpuJit[i][0]), ms(readyCpuJit[i][1]),
                    ms(readyCpuJit[i][2])));
        }
        FootprintBench.Result r = new FootprintBench.Result(starts, List.of(
                new FootprintBench.Size(3, 30, 90L << 20, 96L << 20, 3)));

        assertThat(r.median(0, FootprintBench.Start::cpu)).isEqualTo(ms(1200));
        assertThat(r.median(1, FootprintBench.Start::ready)).isEqualTo(ms(600));
        String report = FootprintBench.report(r, s, "2026-12-03T07:00:00Z");
        assertThat(report).contains("Sidecars run with `--mtls off`")
                .contains("3 starts of each of 2 variants, alternating (A, B, A, B...)")
                .contains("| 2 | `-XX:TieredStopAtLevel=1` | 600 | 800 | 300 |")
                .contains("| `as shipped` | 3 | 800 | 700–900 | 1200 | 1100–1300 | 700 |")
                .contains("| `-XX:TieredStopAtLevel=1` | 3 | 600 | 500–650 | 800 | 700–900 | 300 |")
                .contains("A sidecar (the first variant) calling 3 services")
                .contains("| 3 | 30 | 90.0 | 96.0 | 3 |")
                .doesNotContain("**median**");
    }

    @Test
    void withOneVariantTheReportKeepsItsMedianRow() {
        FootprintBench.Settings s = settings(2, List.of(List.of("-XX:-UsePerfData")));
        FootprintBench.Result r = new FootprintBench.Result(List.of(
                new FootprintBench.Start(0, ms(900), ms(1200), ms(700)),
                new FootprintBench.Start(0, ms(700), ms(1000), ms(500))),
                List.of(new FootprintBench.Size(3, 30, 90L << 20, 96L << 20, 3),
                        new FootprintBench.Size(1000, 10000, 94L << 20, 99L << 20, 3)));
        String report = FootprintBench.report(r, s, "2026-12-03T07:00:00Z");
        assertThat(report).contains("then `-XX:-UsePerfData` (--sidecar-jvm-add)")
                .contains("| **median** | **900** | **1200** | **700** |")
                .contains("Difference: +4.0 MiB RSS");
    }
}
