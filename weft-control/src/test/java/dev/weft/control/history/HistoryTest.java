package dev.weft.control.history;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HistoryTest {

    private static double[] v(double rate) {
        double[] values = new double[History.METRICS];
        Arrays.fill(values, Double.NaN);
        values[0] = rate;
        return values;
    }

    @Test
    void aSeriesReadsBackInTimeOrderAfterTheRingWrapsAndKeepsOnlyTheLastCapacityTicks() {
        History h = new History(4, 10);
        for (int t = 1; t <= 6; t++) {
            h.beginTick(t * 1000L);
            h.put(History.Kind.SERVICE, "provider", v(t * 10));
        }
        History.Points p = h.read(History.Kind.SERVICE, "provider", 0);
        assertThat(p.times()).containsExactly(3000L, 4000L, 5000L, 6000L);
        assertThat(p.values()[0]).containsExactly(30f, 40f, 50f, 60f);
        assertThat(h.read(History.Kind.SERVICE, "provider", 5000).times()).containsExactly(5000L, 6000L);
    }

    @Test
    void aTickWithoutTheSeriesLeavesAGapNotTheValueOfARoundAgo() {
        History h = new History(3, 10);
        h.beginTick(1000);
        h.put(History.Kind.EDGE, "a → b", v(5));
        h.beginTick(2000);
        h.beginTick(3000);
        h.put(History.Kind.EDGE, "a → b", v(7));
        h.beginTick(4000); // reuses slot of tick 1: must not show 5 again
        History.Points p = h.read(History.Kind.EDGE, "a → b", 0);
        assertThat(p.times()).containsExactly(2000L, 3000L, 4000L);
        assertThat(p.values()[0][0]).isNaN();
        assertThat(p.values()[0][1]).isEqualTo(7f);
        assertThat(p.values()[0][2]).isNaN();
    }

    @Test
    void aSeriesUnseenForAWholeRingIsRemovedAndKindsDoNotMix() {
        History h = new History(2, 10);
        h.beginTick(1);
        h.put(History.Kind.SERVICE, "x", v(1));
        h.put(History.Kind.ENDPOINT, "x", v(2));
        assertThat(h.seriesCount()).isEqualTo(2);
        assertThat(h.read(History.Kind.ENDPOINT, "x", 0).values()[0]).containsExactly(2f);
        assertThat(h.read(History.Kind.EDGE, "x", 0)).isNull();
        h.beginTick(2);
        h.beginTick(3);
        assertThat(h.seriesCount()).isZero();
        assertThat(h.read(History.Kind.SERVICE, "x", 0)).isNull();
    }

    @Test
    void seriesBeyondTheLimitAreCountedNotKept() {
        History h = new History(2, 2);
        h.beginTick(1);
        h.put(History.Kind.SERVICE, "a", v(1));
        h.put(History.Kind.SERVICE, "b", v(1));
        h.put(History.Kind.SERVICE, "c", v(1));
        assertThat(h.seriesCount()).isEqualTo(2);
        assertThat(h.droppedSeries()).isEqualTo(1);
        assertThat(h.read(History.Kind.SERVICE, "c", 0)).isNull();
        assertThat(h.arrayBytes()).isEqualTo(2 * Long.BYTES + 2L * History.METRICS * 2 * Float.BYTES);
    }

    @Test
    void aPutBeforeTheFirstTickIsAProgrammingError() {
        assertThatThrownBy(() -> new History().put(History.Kind.SERVICE, "a", v(1)))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new History(1, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
