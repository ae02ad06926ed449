package dev.weft.registry.support;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationsTest {
    @Test
    void readsEveryUnitFractionsCaseAndIso() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse(" 30s ")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1_500));
        assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("1H")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("PT1M")).isEqualTo(Duration.ofMinutes(1));
        assertThat(Durations.parse("pt5s")).isEqualTo(Duration.ofSeconds(5));
        assertThat(Durations.parse("0s")).isEqualTo(Duration.ZERO);
    }

    @Test
    void refusesBareNumbersNegativesAndWordsNamingTheText() {
        for (String bad : new String[] {"10", "-1s", "PT-5S", "soon", "", "5 sec", "1.s"}) {
            assertThatThrownBy(() -> Durations.parse(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'")
                    .hasMessageContaining(Durations.EXPECTED);
        }
    }

    @Test
    void aBareNumberGetsTheFixSuggested() {
        assertThatThrownBy(() -> Durations.parse("10"))
                .hasMessageContaining("did you mean 10s or 10ms?");
        assertThatThrownBy(() -> Durations.parse("soon"))
                .hasMessageNotContaining("did you mean");
    }

    @Test
    void formatsTheShortestExactForm() {
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.format(Duration.ofSeconds(30))).isEqualTo("30s");
        assertThat(Durations.format(Duration.ofMillis(1_500))).isEqualTo("1.5s");
        assertThat(Durations.format(Duration.ofMinutes(15))).isEqualTo("15m");
        assertThat(Durations.format(Duration.ofHours(1))).isEqualTo("1h");
        assertThat(Durations.parse(Durations.format(Duration.ofMillis(2_500)))).isEqualTo(Duration.ofMillis(2_500));
    }
}
