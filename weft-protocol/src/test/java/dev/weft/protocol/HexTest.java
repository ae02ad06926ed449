package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class HexTest {
    @Test
    void lowerCaseDigitsParseAndAnythingElseIsRefused() {
        assertThat(Hex.parse("00f067aa0ba902b7", 0, 16, -1)).isEqualTo(0x00f067aa0ba902b7L);
        assertThat(Hex.parse("ffffffffffffffff", 0, 16, 7)).isEqualTo(-1L);
        assertThat(Hex.parse("x-0af9-", 2, 4, -1)).isEqualTo(0x0af9);
        assertThat(Hex.parse8("--4bf92f35--", 2)).isEqualTo(0x4bf92f35L);
        assertThat(Hex.isHex("0123456789abcdef", 0, 16)).isTrue();
        // W3C Trace Context and B3 write ids in lower case only; an upper-case digit makes the id invalid.
        for (String bad : new String[] {"0g", "g0", " 0", "0/", "0:", "0@", "0G", "0`", "-1", "0A", "F0"}) {
            assertThat(Hex.parse(bad, 0, 2, 42)).as(bad).isEqualTo(42);
            assertThat(Hex.isHex(bad, 0, 2)).as(bad).isFalse();
            assertThat(Hex.parse8(bad + "000000", 0)).as(bad).isEqualTo(-1);
            assertThat(Hex.parse8(word(bad + "000000"))).as(bad).isEqualTo(-1);
        }
    }

    @Test
    void eightDigitsReadAsOneWordAreTheSameNumber() {
        assertThat(Hex.parse8(word("4bf92f35"))).isEqualTo(0x4bf92f35L);
        assertThat(Hex.parse8(word("00000000"))).isZero();
        assertThat(Hex.parse8(word("ffffffff"))).isEqualTo(0xffffffffL);
        assertThat(Hex.value('a')).isEqualTo(10);
        assertThat(Hex.value((byte) 'A')).isEqualTo(-1);
        assertThat(Hex.value((byte) 0xB0)).isEqualTo(-1); // a negative byte, as ByteBuf.getByte gives it
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
        assertThat(Hex.parse("abc", 0, -1, -1)).isEqualTo(-1);
        assertThat(Hex.parse("00000000000000000", 0, 17, -1)).isEqualTo(-1);
        assertThat(Hex.isHex("abc", -1, 2)).isFalse();
        assertThat(Hex.isHex("abc", 2, 2)).isFalse();
    }

    @Test
    void idsAreWrittenInLowerCaseDigits() {
        assertThat(Hex.of(0x0123456789abcdefL, 0xfedcba9876543210L)).isEqualTo("0123456789abcdeffedcba9876543210");
        assertThat(Hex.of(0, 1)).isEqualTo("00000000000000000000000000000001");
        assertThat(Hex.of(-1L, 0)).isEqualTo("ffffffffffffffff0000000000000000");
        assertThat(Hex.of(0xabcL)).isEqualTo("0000000000000abc");
        byte[] out = new byte[18];
        Hex.write(0xfedcba9876543210L, out, 1);
        assertThat(new String(out, 1, 16, StandardCharsets.US_ASCII)).isEqualTo("fedcba9876543210");
        assertThat(Hex.digits8(0x4bf92f35)).isEqualTo(word("4bf92f35"));
    }

    private static long word(String eightChars) {
        ByteBuf b = Unpooled.copiedBuffer(eightChars, StandardCharsets.ISO_8859_1);
        try {
            return b.getLong(0);
        } finally {
            b.release();
        }
    }
}
