package dev.weft.dataplane.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DecimalsTest {

    @Test
    void aNumberIsWrittenAsLongToStringWritesItWhateverTheTableHeld() {
        long[] values = {0, 1, -1, 9, 10, 42, 999, 1000, 14_999, 15_000, Integer.MAX_VALUE, Long.MAX_VALUE,
                Long.MIN_VALUE, 64, 128, 1L << 40};
        for (int round = 0; round < 3; round++) {
            for (long v : values) {
                assertThat(Decimals.of(v)).isEqualTo(Long.toString(v));
            }
        }
        // Numbers sharing a slot replace each other; each still reads as itself.
        for (long v = 0; v < 10 * Decimals.SLOTS; v++) {
            assertThat(Decimals.of(v)).isEqualTo(Long.toString(v));
            assertThat(Decimals.of(v + 7 * Decimals.SLOTS)).isEqualTo(Long.toString(v + 7 * Decimals.SLOTS));
        }
    }

    @Test
    void theSameNumberAgainOnTheSameThreadIsTheStringMadeBefore() {
        String first = Decimals.of(14_999);
        assertThat(Decimals.of(14_999)).isSameAs(first);
        assertThat(Decimals.of(21)).isSameAs(Decimals.of(21));
    }
}
