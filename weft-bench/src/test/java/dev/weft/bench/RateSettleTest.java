package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's warm-up ends at the first two 5 s windows in a row within 5 % of each other, cut from one load's seconds;
 * otherwise its cap ends it, and the outcome says so. No load here: the rule is under test.
 */
class RateSettleTest {
    /** Feeds 5 one-second ticks per rate; returns the window after which the rule first said stable, or -1. */
    private static int feed(RateSettle settle, double... windowRates) {
        for (int w = 0; w < windowRates.length; w++) {
            boolean stable = false;
            for (int s = 0; s < 5; s++) {
                stable = settle.second(1.0, Math.round(windowRates[w]));
            }
            if (stable) {
                return w;
            }
        }
        return -1;
    }

    @Test
    void aClimbingRateKeepsWarmingUpUntilTwoWindowsAgree() {
        RateSettle settle = new RateSettle(null);
        assertThat(feed(settle, 900, 2_100, 3_300, 4_800, 4_950, 9_999)).isEqualTo(4);
        RateSettle.Outcome o = settle.outcome();
        assertThat(o.capped()).isFalse();
        assertThat(o.took()).isEqualTo(Duration.ofSeconds(25));
        assertThat(o.previous()).isEqualTo(4_800);
        assertThat(o.last()).isEqualTo(4_950);
        assertThat(o.describe()).isEqualTo("25 s, until stable (4800 then 4950 QPS in the last two 5 s windows)");
    }

    @Test
    void aSteadyRateWhileTheSidecarsStillCompileIsNotStableYet() {
        // The sidecars' CPU as /proc would show it: 1 s of CPU per window, of which the JIT's share is given per window.
        double[] jitShares = {0.5, 0.3, 0.2, 0.04, 0.03};
        long[] cpu = {0};
        long[] jit = {0};
        int[] window = {0};
        JitSettle.Meter meter = new JitSettle.Meter() {
            @Override
            public long cpuNanos() {
                return cpu[0];
            }

            @Override
            public long jitNanos() {
                return jit[0];
            }
        };
        RateSettle settle = new RateSettle(meter);
        int stableAt = -1;
        for (double rate : new double[] {2_949, 2_884, 2_900, 2_950, 2_960}) {
            cpu[0] += 1_000_000_000L;
            jit[0] += Math.round(jitShares[window[0]] * 1_000_000_000L);
            boolean stable = false;
            for (int s = 0; s < 5; s++) {
                stable = settle.second(1.0, Math.round(rate));
            }
            if (stable && stableAt < 0) {
                stableAt = window[0];
            }
            window[0]++;
        }
        // Rates agree from the second window on; the JIT is under 5 % of the sidecars' CPU from the fourth.
        assertThat(stableAt).isEqualTo(3);
        assertThat(settle.outcome().describe()).isEqualTo("25 s, until stable (2950 then 2960 QPS in the last two 5 s"
                + " windows; the sidecars' JIT 3% of their CPU in the last window)");
    }

    @Test
    void stableIsNotSaidBeforeAWindowEnds() {
        RateSettle settle = new RateSettle(null);
        feed(settle, 5_000);
        for (int s = 0; s < 4; s++) {
            assertThat(settle.second(1.0, 5_000)).as("second %d of the second window", s + 1).isFalse();
        }
        assertThat(settle.second(1.0, 5_000)).isTrue();
    }

    @Test
    void aRateThatNeverSettlesEndsAtTheCapAndSaysSo() {
        RateSettle settle = new RateSettle(null);
        assertThat(feed(settle, 1_000, 2_000, 3_000)).isEqualTo(-1);
        assertThat(settle.outcome().capped()).isTrue();
        assertThat(settle.outcome().describe())
                .isEqualTo("15 s, the cap, not yet stable (2000 then 3000 QPS in the last two 5 s windows)");
    }

    @Test
    void aWindowsRateIsOverTheTimeItCovered() {
        RateSettle settle = new RateSettle(null);
        // Seconds that ran long (a busy machine): 4 ticks of 1.25 s make one window of 5 s.
        for (int s = 0; s < 4; s++) {
            settle.second(1.25, 5_000);
        }
        assertThat(settle.outcome().last()).isEqualTo(4_000);
    }

    @Test
    void aCapShorterThanAWindowAndNoWarmUpAreSaidPlainly() {
        RateSettle settle = new RateSettle(null);
        settle.second(1.0, 500);
        settle.second(1.0, 500);
        assertThat(settle.outcome().capped()).isTrue();
        assertThat(settle.outcome().describe()).isEqualTo("2 s, the cap, not yet stable (no whole window)");
        assertThat(new RateSettle(null).outcome()).isSameAs(RateSettle.Outcome.NONE);
        assertThat(RateSettle.Outcome.NONE.describe()).isEqualTo("none");
    }

    @Test
    void noSuccessesIsNeverStable() {
        assertThat(feed(new RateSettle(null), 0, 0, 0)).isEqualTo(-1);
    }

    @Test
    void asTheGeneratorsListenerItPassesEverythingOnAndCountsOnlyTheWarmUp() {
        RateSettle settle = new RateSettle(null);
        List<String> seen = new ArrayList<>();
        LoadGenerator.PhaseListener l = settle.around(new LoadGenerator.PhaseListener() {
            @Override
            public void measurementStarting() {
                seen.add("start");
            }

            @Override
            public void second(LoadGenerator.Tick tick) {
                seen.add("second " + tick.ok());
            }
        });
        for (int s = 0; s < 10; s++) {
            l.second(new LoadGenerator.Tick(0, 1.0, 4_000, 0, 0, 0, null));
        }
        assertThat(l.warmedUp()).isTrue();
        l.measurementStarting();
        l.second(new LoadGenerator.Tick(0, 1.0, 9, 0, 0, 0, null));
        assertThat(settle.outcome().took()).as("the measured second is not warm-up").isEqualTo(Duration.ofSeconds(10));
        assertThat(seen).hasSize(12).contains("start").endsWith("second 9");
    }
}
