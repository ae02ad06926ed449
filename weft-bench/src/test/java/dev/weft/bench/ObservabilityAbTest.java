package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ObservabilityAbTest {
    private static BenchRow row(boolean on, int pair, double qps, double cpu, double control) {
        return row(on, pair, qps, cpu, control, Double.NaN);
    }

    /** @param generator the load generator's CPU per request in the window (wrk's), NaN when unknown */
    private static BenchRow row(boolean on, int pair, double qps, double cpu, double control, double generator) {
        double n = Double.NaN;
        return new BenchRow("observability", on ? "on" : "paused", 1, pair, 512, qps, n, n, n, 50, n, 1000, 0, cpu,
                1.0, control, n, n, n, n, n, generator, n, n, n, n, 3, n, n, null);
    }

    @Test
    void theReportGivesEachPairsCostAndJudgesTheMedianAgainstFivePercent() {
        List<ObservabilityAb.Window> windows = List.of(
                new ObservabilityAb.Window(1, true, row(true, 1, 8000, 104, 2)),
                new ObservabilityAb.Window(1, false, row(false, 1, 8100, 100, 1)),
                new ObservabilityAb.Window(2, false, row(false, 2, 7000, 120, 1)),
                new ObservabilityAb.Window(2, true, row(true, 2, 7000, 132, 2)),
                new ObservabilityAb.Window(3, true, row(true, 3, 9000, 90, 2)),
                new ObservabilityAb.Window(3, false, row(false, 3, 9000, 90, 1)));
        List<ObservabilityAb.Pair> pairs = ObservabilityAb.pairs(windows);
        assertThat(pairs).extracting(ObservabilityAb.Pair::index).containsExactly(1, 2, 3);
        assertThat(pairs.get(0).proxyCost()).isCloseTo(0.04, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(pairs.get(1).proxyCost()).isCloseTo(0.10, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(pairs.get(0).steadyCost()).isCloseTo(103.0 / 99 - 1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(pairs.get(0).meshCost()).isCloseTo(106.0 / 101 - 1, org.assertj.core.data.Offset.offset(1e-9));

        ObservabilityAb.Settings s = new ObservabilityAb.Settings(Experiment.Shape.MESH, 512, 3, Duration.ofSeconds(10),
                Duration.ofSeconds(3), Duration.ofSeconds(120));
        String md = ObservabilityAb.report(List.of(windows), List.of(1), s, "now", "test machine");
        assertThat(md).contains("## 1 Worker per sidecar")
                .contains("| 1 | on, off | 8000 | 8100 | 104.0 | 100.0 | 1.0 | 1.0 | +4.0 % | +4.0 % |")
                .contains("| 2 | off, on | 7000 | 7000 | 132.0 | 120.0 | 1.0 | 1.0 | +10.0 % | +10.1 % |")
                .contains("Median cost +4.0 %").contains("2 of 3 pairs within 5 %")
                .contains("**Target (median within 5 %): met on all CPU, met steady.**");

        assertThat(md).contains("The paper's mesh at 512 connections").contains("on all four sidecars");
        String perHop = ObservabilityAb.report(List.of(windows), List.of(1), new ObservabilityAb.Settings(
                Experiment.Shape.HOP, 64, 3, Duration.ofSeconds(10), Duration.ofSeconds(3), Duration.ofSeconds(120)),
                "now", "test machine");
        assertThat(perHop).contains("`weft bench observability --shape hop`").contains("The per-hop pair")
                .contains("at 64 connections").contains("on both sidecars");

        String worse = ObservabilityAb.report(List.of(windows.subList(0, 4)), List.of(2), s, "now", "test machine");
        assertThat(worse).contains("## 2 Workers per sidecar").contains("Median cost +7.0 %")
                .contains("**Target (median within 5 %): not met on all CPU, not met steady.**");
        assertThat(ObservabilityAb.csv(List.of(windows)).lines()).hasSize(7).first().asString()
                .startsWith("section,plane,proxy_threads");
        assertThat(md).as("no generator CPU, no figure with the machine's speed divided out")
                .contains("| +4.0 % | +4.0 % | n/a |").doesNotContain("Per wrk CPU (");
    }

    @Test
    void dividingByTheGeneratorsCpuTakesTheMachinesSpeedOutOfEachPair() {
        // Pair 1: the machine ran 10 % slower in the on window (wrk too), so the raw +14.4 % is +4 % per wrk CPU.
        // Pair 2: the same speed in both; pair 3: faster when on, so a raw -6.4 % is +4 %.
        List<ObservabilityAb.Window> windows = List.of(
                new ObservabilityAb.Window(1, true, row(true, 1, 8000, 114.4, 2, 22)),
                new ObservabilityAb.Window(1, false, row(false, 1, 8800, 100, 1, 20)),
                new ObservabilityAb.Window(2, false, row(false, 2, 8000, 100, 1, 20)),
                new ObservabilityAb.Window(2, true, row(true, 2, 7800, 106, 2, 20)),
                new ObservabilityAb.Window(3, true, row(true, 3, 9000, 93.6, 2, 18)),
                new ObservabilityAb.Window(3, false, row(false, 3, 8600, 100, 1, 20)));
        List<ObservabilityAb.Pair> pairs = ObservabilityAb.pairs(windows);
        assertThat(pairs.get(0).proxyCost()).isCloseTo(0.144, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(pairs.get(0).machineCost()).isCloseTo(0.04, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(pairs.get(1).machineCost()).isCloseTo(0.06, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(pairs.get(2).machineCost()).isCloseTo(0.04, org.assertj.core.data.Offset.offset(1e-9));

        String md = ObservabilityAb.report(List.of(windows), List.of(1), new ObservabilityAb.Settings(
                Experiment.Shape.HOP, 64, 3, Duration.ofSeconds(10), Duration.ofSeconds(3), Duration.ofSeconds(120)),
                "now", "test machine");
        assertThat(md)
                .contains("| 1 | on, off | 8000 | 8800 | 114.4 | 100.0 | 1.0 | 1.0 | +14.4 % | +14.5 % | +4.0 % |")
                .contains("Median cost +6.0 %").contains("**Target (median within 5 %): not met on all CPU")
                .contains("Per wrk CPU (the proxies' CPU over the load generator's in the same window: the "
                        + "machine's speed divided out) +4.0 % (quartiles +4.0 to +5.0 %")
                .contains("**Target: met with the machine's speed divided out.**");
    }
}
