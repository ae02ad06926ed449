package dev.weft.dataplane.observe;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HexTest {
    @Test
    void digitsOfEitherCaseParseAndAnythingElseIsRefused() {
        assertThat(Hex.parse("00f067aa0ba902b7", 0, 16, -1)).isEqualTo(0x00f067aa0ba902b7L);
        assertThat(Hex.parse("FFFFFFFFFFFFFFFF", 0, 16, 7)).isEqualTo(-1L);
        assertThat(Hex.parse("x-0aF9-", 2, 4, -1)).isEqualTo(0x0af9);
        assertThat(Hex.parse8("--4bf92f35--", 2)).isEqualTo(0x4bf92f35L);
        assertThat(Hex.isHex("0123456789abcdefABCDEF", 0, 22)).isTrue();
        for (String bad : new String[] {"0g", "g0", " 0", "0/", "0:", "0@", "0G", "0`", "-1"}) {
            assertThat(Hex.parse(bad, 0, 2, 42)).as(bad).isEqualTo(42);
            assertThat(Hex.isHex(bad, 0, 2)).as(bad).isFalse();
            assertThat(Hex.parse8(bad + "000000", 0)).as(bad).isEqualTo(-1);
        }
    }

    @Test
    void aCharBeyondLatin1WhoseLowByteIsADigitIsNotOne() {
        // U+0130 and U+0161: their low bytes are '0' and 'a'.
        assertThat(Hex.isHex("\u0130", 0, 1)).isFalse();
        assertThat(Hex.parse("1\u0161", 0, 2, -5)).isEqualTo(-5);
        assertThat(Hex.parse8("0000000\u0130", 0)).isEqualTo(-1);
    }

    @Test
    void outOfRangeIsRefusedNotThrown() {
        assertThat(Hex.parse("abc", 1, 4, -1)).isEqualTo(-1);
        assertThat(Hex.isHex("abc", -1, 2)).isFalse();
    }

    @Test
    void aTraceIdIsItsTwoHalvesIn32LowerCaseDigits() {
        assertThat(Hex.of(0x0123456789abcdefL, 0xfedcba9876543210L)).isEqualTo("0123456789abcdeffedcba9876543210");
        assertThat(Hex.of(0, 1)).isEqualTo("00000000000000000000000000000001");
        assertThat(Hex.of(-1L, 0)).isEqualTo("ffffffffffffffff0000000000000000");
    }
}
