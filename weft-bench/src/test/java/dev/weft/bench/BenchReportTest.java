package dev.weft.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class BenchReportTest {
    @TempDir
    Path dir;

    private static BenchRow row(String plane, int round, int conns, double qps, double p99, double cpu, double link) {
        return new BenchRow("mesh", plane, DataPlane.OWN_DEFAULT_THREADS, round, conns, qps, qps / (conns / 0.05), 60, 80, p99, p99 + 10, 1000, 0,
                cpu, 2, 12, 40, 30, link, 90, 1.5, 100, 0.5, 200, cpu / 300, 250, 50, 2.0, Double.NaN, null);
    }

    private Bench.Settings settings() {
        return new Bench.Settings(Set.of("mesh"), List.of("weft", "weft-http1", "haproxy"), List.of(128, 512), 3,
                Duration.ofSeconds(1), Duration.ZERO, Duration.ZERO, Duration.ofSeconds(2), Duration.ofMillis(50), 16, Duration.ofSeconds(2), List.of("-Xmx64m"), 1,
                Generator.BUILTIN, List.of(100, 200, 300), List.of(), dir, false, false, true, Experiment.WEFT_CLI_MAIN,
                null);
    }

    @Test
    void reportsTheMedianOfEachFigureAndTheTotalOfRequestsAndErrors() {
        BenchRow median = BenchRow.median(List.of(row("weft", 1, 512, 100, 9, 50, 200),
                row("weft", 2, 512, 300, 1, 70, 220), row("weft", 3, 512, 200, 5, 60, 210),
                BenchRow.failed("mesh", "weft", 0, 4, 512, "did not start")));
        assertThat(median.qps()).isEqualTo(200);
        assertThat(median.p99Ms()).isEqualTo(5);
        assertThat(median.proxyCpuUsPerReq()).isEqualTo(60);
        assertThat(median.requests()).isEqualTo(3000);
        assertThat(median.round()).as("rounds aggregated").isEqualTo(3);
        assertThat(BenchRow.median(List.of(BenchRow.failed("mesh", "x", 0, 1, 1, "no")))).isNull();
    }

    @Test
    void writesTablesTargetsAndAChartWithOneLinePerDataPlane() throws Exception {
        BenchReport report = new BenchReport(settings(), "test machine");
        for (int round = 1; round <= 3; round++) {
            report.addAll(List.of(row("weft", round, 128, 2000, 70, 40, 150), row("weft", round, 512, 7000, 120, 45, 150),
                    row("weft-http1", round, 128, 1900, 75, 50, 300), row("weft-http1", round, 512, 6500, 130, 55, 300),
                    row("haproxy", round, 128, 2100, 65, 60, 350), row("haproxy", round, 512, 7500, 110, 50, 350)));
        }
        report.write();

        String md = report.markdown();
        assertThat(md).contains("| weft | default | 512 | 7000 | 0.68 |")
                .contains("### Protocol on the sidecar link: WMP vs HTTP/1.1")
                .contains("| default | 512 | 150 | 300 | 50% |")
                .contains("capacities 100/200/300 in flight")
                .contains("| mesh 512: Weft QPS ≥ best of nginx, HAProxy | Weft 7000; nginx n/a; HAProxy 7500; weft"
                        + " against haproxy by round: -7%, -7%, -7% | **no** |")
                .contains("| mesh 512: Weft proxy CPU µs/req ≤ HAProxy's | 45.0 vs 50.0; weft against haproxy by round:"
                        + " -10%, -10%, -10% | yes |")
                .contains("| generator CPU µs/req | apps CPU µs/req | proxy CPU ÷ (apps + generator) |")
                .contains("| 100.0 | 200.0 | 0.150 |")
                .contains("| WMP ≥ 40% fewer bytes/request than HTTP/1.1 on the link | 150 vs 300 B (50% fewer) | yes |")
                // Issue 15's target, with the peak of each role (VmHWM), the larger of which decides.
                .contains("| peak RSS (VmHWM) per sidecar ≤ 64 MiB (stretch 48) at 512 connections | consumer side "
                        + "40 MiB, largest provider side 30 MiB | yes |")
                .contains("| peak RSS consumer-side MiB | peak RSS provider-side MiB |");
        assertThat(dir.resolve("summary.md")).exists();
        assertThat(dir.resolve("rounds.csv")).content().startsWith(String.join(",", BenchRow.CSV_HEADER))
                .hasLineCount(1 + 18);
        assertThat(dir.resolve("mesh.csv")).content().hasLineCount(1 + 6)
                .contains("mesh,weft,default,3,512,7000,0.684,60,80,120,130,3000,0,45,2,12,40,30,150,90,1.5,100,0.5,200,0.15,250,50,2,");

        String svg = java.nio.file.Files.readString(dir.resolve("mesh-chart.svg"));
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        // Two panels with a line per plane each, plus the dashed ceiling in the QPS panel.
        assertThat(doc.getElementsByTagName("polyline").getLength()).isEqualTo(2 * 3 + 1);
        assertThat(svg).contains(">weft-http1<").contains(">haproxy<").contains("p99 latency (ms)");
    }

    private static BenchRow tlsRow(String section, String plane, int round, double cpu, double handshakesPerSec) {
        return new BenchRow(section, plane, 1, round, 512, 8000, 0.78, 60, 80, 90, 100, 1000, 0, cpu, 1, 10, 40, 30,
                150, 90, 1.5, 100, 0.5, 200, cpu / 300, 250, 50, 2.0, handshakesPerSec, null);
    }

    @Test
    void theTlsPlanesGetTheirLinkTheirHandshakesAndIssue13sTargetsComputedFromTheRun() throws Exception {
        Bench.Settings tls = new Bench.Settings(Set.of("mesh", "hop"), List.of("weft-mtls", "weft-off", "haproxy-tls"),
                List.of(512), 2, Duration.ofSeconds(1), Duration.ZERO, Duration.ZERO, Duration.ofSeconds(2),
                Duration.ofMillis(50), 16, Duration.ofSeconds(2), List.of(), 1, Generator.BUILTIN,
                List.of(100, 200, 300), List.of(1), dir, false, false, true, Experiment.WEFT_CLI_MAIN, null);
        BenchReport report = new BenchReport(tls, "test machine");
        for (int round = 1; round <= 2; round++) {
            // Weft with mTLS: 46 µs/req in the mesh against 40 off (+15.0%, met); per hop 2 x 21 against 2 x 20 (+5%).
            report.addAll(List.of(tlsRow("mesh", "weft-mtls", round, 46, 0), tlsRow("mesh", "weft-off", round, 40, 0),
                    tlsRow("mesh", "haproxy-tls", round, 50, Double.NaN),
                    // One handshake in round 2's window: the target is about every window, not the median.
                    tlsRow("hop", "weft-mtls", round, 42, round == 2 ? 0.5 : 0), tlsRow("hop", "weft-off", round, 40, 0),
                    tlsRow("hop", "haproxy-tls", round, 44, Double.NaN)));
        }
        report.write();

        String md = report.markdown();
        assertThat(md).contains("### The link between the proxies: mutual TLS against plaintext")
                .contains("| weft-mtls | WMP over mutual TLS 1.3 | 1 | 512 | 8000 | 90.0 | 46.0 | 0.00 | 0 |")
                .contains("| haproxy-tls | HTTP/1.1 over mutual TLS 1.3 | 1 | 512 | 8000 | 90.0 | 50.0 |  | 0 |")
                .contains("| weft-mtls | WMP over mutual TLS 1.3 | 1 | 512 | 8000 | 90.00 | 21.0 | 0.25 | 0 |")
                .contains("## Targets (issue 13: mTLS on the link)")
                .contains("| per hop: Weft CPU with mTLS ≤ HAProxy's with TLS | 21.0 vs 22.0 µs/req per hop | yes |")
                .contains("| mesh 512: mTLS costs Weft ≤ 15% proxy CPU per request over --mtls off | 46.0 vs 40.0 µs/req"
                        + " (+15.0%) | yes |")
                .contains("| per hop: mTLS costs Weft ≤ 15% proxy CPU per request over --mtls off | 42.0 vs 40.0 µs/req"
                        + " (+5.0%) | yes |")
                .contains("| mesh: TLS handshakes at steady load = 0/s | at most 0.00/s in 2 measured window(s) of"
                        + " weft-mtls | yes |")
                .contains("| per hop: TLS handshakes at steady load = 0/s | at most 0.50/s in 2 measured window(s) of"
                        + " weft-mtls | **no** |")
                .contains("| weft-off | 1 | WMP, plaintext (--mtls off) |");
        assertThat(dir.resolve("rounds.csv")).content().contains(",tls_handshakes_per_s,error\n")
                .contains("hop,weft-mtls,1,2,512,");
    }

    @Test
    void targetsPairThePlanesRoundByRoundSoThatAMachineThatSlowedDownShowsAsSuch() {
        // The machine lost a third of its speed in round 3: the medians mix its states, the pairs do not.
        BenchReport report = new BenchReport(settings(), "test machine");
        report.addAll(List.of(row("weft", 1, 512, 10000, 80, 80, 150), row("weft-bare", 1, 512, 10500, 80, 74, 150),
                row("weft", 2, 512, 9000, 90, 90, 150), row("weft-bare", 2, 512, 9500, 85, 80, 150),
                row("weft", 3, 512, 6000, 140, 135, 150), row("weft-bare", 3, 512, 6300, 140, 136, 150)));
        assertThat(report.markdown())
                .contains("| observability: proxy CPU µs/req with tracing and metrics within 5% of both off, at 512 | 90.0"
                        + " vs 80.0 (13% more); weft against weft-bare by round: +8%, +13%, -1% | **no** |")
                .contains("weft against weft-bare by round: -5%, -5%, -5% | **no** |");
        BenchReport one = new BenchReport(settings(), "test machine");
        one.addAll(List.of(row("weft", 1, 512, 7000, 120, 45, 150), row("haproxy", 1, 512, 7500, 110, 50, 350)));
        assertThat(one.markdown()).as("one round: nothing to pair").doesNotContain("by round");
    }

    @Test
    void withoutATlsPlaneTheReportHasNoTlsSection() {
        BenchReport report = new BenchReport(settings(), "test machine");
        report.addAll(List.of(row("weft", 1, 512, 7000, 120, 45, 150), row("haproxy", 1, 512, 7500, 110, 50, 350)));
        assertThat(report.markdown()).doesNotContain("mutual TLS against plaintext").doesNotContain("issue 13");
    }

    @Test
    void roundsAxisLimitsUpToARoundMultipleOfAPowerOfTen() {
        assertThat(SvgChart.niceCeiling(7300)).isEqualTo(10000);
        assertThat(SvgChart.niceCeiling(180)).isEqualTo(200);
        assertThat(SvgChart.niceCeiling(10240)).isEqualTo(12000);
        assertThat(SvgChart.niceCeiling(0)).isEqualTo(1);
    }
}
