package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SpanRingTest {

    private static ObservedExchange span(long n) {
        ObservedExchange x = new ObservedExchange(null, null, Direction.INBOUND, "provider", "GET", "/", null,
                RouteTable.DEFAULT, 0, 0);
        x.spanId = n;
        return x;
    }

    @Test
    void spansComeOutInTheOrderTheyWentInAcrossManyTurnsOfTheRing() {
        SpanRing ring = new SpanRing(8);
        List<ObservedExchange> out = new ArrayList<>();
        long next = 0;
        long expected = 0;
        for (int turn = 0; turn < 50; turn++) {
            for (int i = 0; i < 5; i++) {
                assertThat(ring.offer(span(next++))).isTrue();
            }
            out.clear();
            assertThat(ring.drainTo(out, 3)).isEqualTo(3);
            assertThat(ring.drainTo(out, 100)).isEqualTo(2);
            for (ObservedExchange x : out) {
                assertThat(x.spanId).isEqualTo(expected++);
            }
            assertThat(ring.size()).isZero();
        }
    }

    @Test
    void aFullRingRefusesUntilTheReaderGivesSlotsBack() {
        SpanRing ring = new SpanRing(4);
        for (int i = 0; i < 4; i++) {
            assertThat(ring.offer(span(i))).isTrue();
        }
        assertThat(ring.offer(span(4))).isFalse();
        assertThat(ring.size()).isEqualTo(4);
        List<ObservedExchange> out = new ArrayList<>();
        assertThat(ring.drainTo(out, 1)).isEqualTo(1);
        assertThat(ring.offer(span(5))).isTrue();
        assertThat(ring.offer(span(6))).isFalse();
        out.clear();
        ring.drainTo(out, 10);
        assertThat(out).extracting(x -> x.spanId).containsExactly(1L, 2L, 3L, 5L);
    }

    @Test
    void capacityIsRoundedUpToAPowerOfTwo() {
        SpanRing ring = new SpanRing(5);
        int taken = 0;
        while (ring.offer(span(taken))) {
            taken++;
        }
        assertThat(taken).isEqualTo(8);
    }
}
