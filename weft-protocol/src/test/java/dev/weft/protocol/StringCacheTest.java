package dev.weft.protocol;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class StringCacheTest {
    private final StringCache cache = new StringCache(StandardCharsets.UTF_8);

    private String get(String s) {
        byte[] b = ("--" + s + "--").getBytes(StandardCharsets.UTF_8);
        return cache.get(b, 2, b.length - 4);
    }

    @Test
    void theSameAsciiBytesGiveTheSameStringAgain() {
        String first = get("provider");
        assertThat(first).isEqualTo("provider");
        assertThat(get("provider")).isSameAs(first);
        assertThat(get("consumer")).isEqualTo("consumer").isNotSameAs(first);
    }

    @Test
    void bytesThatAreNotAsciiAreDecodedInTheDecodersCharsetAndNotKept() {
        String first = get("caf\u00e9");
        assertThat(first).isEqualTo("caf\u00e9");
        assertThat(get("caf\u00e9")).isEqualTo("caf\u00e9").isNotSameAs(first);
    }

    @Test
    void longValuesAreNotKept() {
        String big = "x".repeat(StringCache.MAX_LENGTH + 1);
        assertThat(get(big)).isEqualTo(big).isNotSameAs(get(big));
        String fits = "y".repeat(StringCache.MAX_LENGTH);
        assertThat(get(fits)).isSameAs(get(fits));
    }

    @Test
    void manyDifferentValuesOnlyReplaceEntriesAndEachIsStillRight() {
        for (int i = 0; i < 10 * StringCache.SLOTS; i++) {
            assertThat(get("value-" + i)).isEqualTo("value-" + i);
        }
        assertThat(get("")).isEmpty();
    }

    @Test
    void valuesThatShareTheirEndsAndLengthAreEachStillRight() {
        // The slot comes from a few words of the value: these share them, and so replace each other in one slot.
        String a = "/api/users/" + "1".repeat(16) + "/profile/photo";
        String b = "/api/users/" + "1".repeat(7) + "2" + "1".repeat(8) + "/profile/photo";
        for (int i = 0; i < 4; i++) {
            assertThat(get(a)).isEqualTo(a);
            assertThat(get(b)).isEqualTo(b);
        }
        String first = get(a);
        assertThat(get(a)).isSameAs(first);
    }

    @Test
    void shortValuesAndValuesOfEveryLengthAreKeptExactly() {
        for (int len = 1; len <= StringCache.MAX_LENGTH; len++) {
            String v = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_".substring(0, len);
            String first = get(v);
            assertThat(first).isEqualTo(v);
            assertThat(get(v)).isSameAs(first);
        }
    }

    @Test
    void aByteOutsideAsciiAnywhereIsDecodedAndNotKept() {
        for (String v : new String[] {"éabcdefghijklmnop", "abcdefghéijklmnop", "abcdefghijklmnoé"}) {
            String first = get(v);
            assertThat(first).isEqualTo(v);
            assertThat(get(v)).isEqualTo(v).isNotSameAs(first);
        }
    }
}
