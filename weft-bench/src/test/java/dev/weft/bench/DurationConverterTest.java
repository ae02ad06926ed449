package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationConverterTest {
    @Test
    void readsTheUnitsWrkUsersType() {
        assertThat(DurationConverter.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(DurationConverter.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationConverter.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(DurationConverter.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationConverter.parse("10")).isEqualTo(Duration.ofSeconds(10));
        assertThat(DurationConverter.parse("PT1M")).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void saysWhatItExpectedWhenItCannotRead() {
        assertThatThrownBy(() -> DurationConverter.parse("soon"))
                .hasMessage("invalid duration 'soon' (expected e.g. 30s, 500ms, 2m or 1h)");
    }
}
