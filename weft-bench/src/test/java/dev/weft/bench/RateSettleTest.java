package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The demo's warm-up ends at the first two steps in a row within 5 % of each other, or at its cap. */
class RateSettleTest {
    /** Steps that report the given rates in turn (no load: the rule, not the load, is under test here). */
    private static final class Rates implements RateSettle.Step {
        private final double[] rates;
        final List<Duration> lengths = new ArrayList<>();

        Rates(double... rates) {
            this.rates = rates;
        }

        @Override
        public double run(Duration length) {
            lengths.add(length);
            return rates[Math.min(lengths.size() - 1, rates.length - 1)];
        }
    }

    @Test
    void aClimbingRateKeepsWarmingUpUntilTwoStepsAgree() throws Exception {
        Rates r = new Rates(900, 2_100, 3_300, 4_800, 4_950, 9_999);
        RateSettle.Outcome o = RateSettle.run(Duration.ofSeconds(60), r);
        assertThat(r.lengths).hasSize(5).allMatch(RateSettle.STEP::equals);
        assertThat(o.capped()).isFalse();
        assertThat(o.previous()).isEqualTo(4_800);
        assertThat(o.last()).isEqualTo(4_950);
        assertThat(o.describe()).contains("until stable").contains("4800 then 4950 QPS");
    }

    @Test
    void theCapEndsAWarmUpThatNeverSettlesAndSaysSo() throws Exception {
        Rates r = new Rates(1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000);
        RateSettle.Outcome o = RateSettle.run(Duration.ofSeconds(15), r);
        assertThat(r.lengths).as("three 5 s steps fit in 15 s").hasSize(3);
        assertThat(o.capped()).isTrue();
        assertThat(o.describe()).contains("the cap, not yet stable");
    }

    @Test
    void aCapShorterThanAStepIsOneStepOfThatLengthAndZeroIsNone() throws Exception {
        Rates r = new Rates(500);
        RateSettle.Outcome o = RateSettle.run(Duration.ofSeconds(2), r);
        assertThat(r.lengths).containsExactly(Duration.ofSeconds(2));
        assertThat(o.capped()).isTrue();
        assertThat(RateSettle.run(Duration.ZERO, new Rates(1))).isSameAs(RateSettle.Outcome.NONE);
        assertThat(RateSettle.Outcome.NONE.describe()).isEqualTo("none");
    }

    @Test
    void noSuccessesIsNeverStable() throws Exception {
        Rates r = new Rates(0, 0, 0);
        assertThat(RateSettle.run(Duration.ofSeconds(15), r).capped()).isTrue();
    }
}
