package dev.weft.registry.support;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class BackoffTest {
    @Test
    void delays_double_from_100_ms_up_to_5_s_and_stay_in_the_upper_half_of_each_step() {
        Backoff backoff = new Backoff();
        long ceiling = 100;
        for (int i = 0; i < 12; i++) {
            long delay = backoff.next().toMillis();
            assertThat(delay).as("attempt %d", i).isBetween(ceiling / 2, ceiling);
            ceiling = Math.min(ceiling * 2, 5000);
        }
        assertThat(backoff.next()).isLessThanOrEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void reset_starts_again_from_the_first_step() {
        Backoff backoff = new Backoff();
        for (int i = 0; i < 10; i++) {
            backoff.next();
        }

        backoff.reset();

        assertThat(backoff.next()).isLessThanOrEqualTo(Duration.ofMillis(100));
    }

    @Test
    void jitter_spreads_clients_that_failed_together() {
        long distinct = IntStream.range(0, 50)
                .mapToObj(i -> {
                    Backoff b = new Backoff();
                    b.next();
                    b.next();
                    return b.next();
                })
                .distinct().count();
        assertThat(distinct).isGreaterThan(10);
    }
}
