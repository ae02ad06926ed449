package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The verdict rule of the demo's steady-state check: within 10 % of the second window, above or below. No load here
 * (DemoTest in weft-cli runs the check on a real topology): windows of given rates.
 */
class SteadyCheckTest {
    private static LoadResult window(long ok, long errors) {
        ErrorCounts e = ErrorCounts.none();
        if (errors > 0) {
            java.util.SortedMap<Integer, Long> byStatus = new java.util.TreeMap<>(java.util.Map.of(503, errors));
            e = new ErrorCounts(byStatus, new java.util.TreeMap<>(), 0, 0, 0);
        }
        Duration measured = Duration.ofSeconds(30);
        return new LoadResult(URI.create("http://127.0.0.1:1/"), 512, 2, Duration.ofSeconds(60), measured,
                ok + errors, ok, e, ok / 30.0, new LoadResult.Latency(50, 51, 55, 90, ok), 10_240,
                Duration.ofMillis(50), Duration.ofSeconds(4));
    }

    @Test
    void aFirstWindowWithinTenPercentOfTheSecondIsSteadyFromEitherSide() {
        SteadyCheck below = new SteadyCheck(window(273_000, 0), window(300_000, 0), Duration.ofMinutes(1));
        assertThat(below.ratio()).isCloseTo(0.91, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(below.steady()).isTrue();
        assertThat(below.describe()).isEqualTo("10000.0 QPS measured again after another 1m of load: the first window "
                + "was 91.0% of it, within 10% (steady)");

        SteadyCheck above = new SteadyCheck(window(327_000, 0), window(300_000, 0), Duration.ofMinutes(1));
        assertThat(above.steady()).isTrue();
    }

    @Test
    void aRateStillClimbingIsNotSteadyAndTheLineSaysSo() {
        // Issue 15's fresh-clone demo: 1,597 QPS measured while the rate climbed towards 3,400.
        SteadyCheck climbing = new SteadyCheck(window(47_910, 0), window(102_000, 0), Duration.ofMinutes(1));
        assertThat(climbing.steady()).isFalse();
        assertThat(climbing.describe()).endsWith("the first window was 47.0% of it, NOT within 10% (not yet the "
                + "steady state)");
    }

    @Test
    void aSecondWindowWithoutOneAnswerGivesNoVerdict() {
        SteadyCheck none = new SteadyCheck(window(300_000, 0), window(0, 12), Duration.ofMinutes(1));
        assertThat(none.ratio()).isNaN();
        assertThat(none.steady()).isFalse();
        assertThat(none.describe()).startsWith("no request succeeded when measured again after another 1m of load: "
                + "no verdict (");
    }
}
