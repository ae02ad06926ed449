package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SoakBenchTest {
    private static final SoakBench.Settings SETTINGS = new SoakBench.Settings(32, Duration.ofSeconds(20),
            Duration.ofSeconds(5), Duration.ZERO);

    private static List<SoakBench.Reading> readings(int rounds, long rssGrowthPerRound) {
        List<SoakBench.Reading> out = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            out.add(new SoakBench.Reading(i * 5.0, "sidecar-consumer", (100L << 20) + i * rssGrowthPerRound,
                    8L << 20, 40, 30));
        }
        return out;
    }

    @Test
    void aFigureWithFewerThanFourReadingsIsListedWithoutAVerdict() {
        List<SoakBench.Drift> drifts = SoakBench.drifts(readings(3, 0), Duration.ZERO);
        assertThat(drifts).hasSize(SoakBench.Figure.values().length).noneMatch(SoakBench.Drift::judged)
                .noneMatch(SoakBench.Drift::drifts);
        String md = SoakBench.report(drifts, SETTINGS, "now", "test machine");
        assertThat(md).contains("**No verdict:**")
                .contains("| sidecar-consumer | resident memory | – | – | – |")
                .contains("no verdict (3 readings, 4 needed)");
    }

    @Test
    void flatFiguresAreNoDriftAndAGrowingOneIsMarked() {
        String flat = SoakBench.report(SoakBench.drifts(readings(8, 0), Duration.ZERO), SETTINGS, "now", "test machine");
        assertThat(flat).contains("**No drift:**").contains("| sidecar-consumer | resident memory |");

        List<SoakBench.Drift> growing = SoakBench.drifts(readings(8, 4L << 20), Duration.ZERO);
        assertThat(growing).filteredOn(SoakBench.Drift::drifts).extracting(d -> d.figure())
                .containsExactly(SoakBench.Figure.RSS);
        assertThat(SoakBench.report(growing, SETTINGS, "now", "test machine")).contains("**Drift in 1 figure(s):**")
                .contains("**yes**");
    }
}
