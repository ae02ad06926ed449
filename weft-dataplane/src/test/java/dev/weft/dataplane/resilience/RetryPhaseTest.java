package dev.weft.dataplane.resilience;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The retry rule as a decision table: method (idempotent or not) × unprocessed × replayable body × attempts left ×
 * deadline × budget, every combination, against the rule written out in words.
 */
class RetryPhaseTest {

    static Stream<Arguments> everyCombination() {
        List<Arguments> rows = new ArrayList<>();
        for (int bits = 0; bits < 64; bits++) {
            rows.add(Arguments.of((bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0,
                    (bits & 16) != 0, (bits & 32) != 0));
        }
        return rows.stream();
    }

    @ParameterizedTest(name = "idempotent={0} unprocessed={1} replayable={2} attemptsLeft={3} beforeDeadline={4} budget={5}")
    @MethodSource("everyCombination")
    void aRetryHappensOnlyWhenSafeReplayableWithinAttemptsDeadlineAndBudget(boolean idempotent, boolean unprocessed,
            boolean replayable, boolean attemptsLeft, boolean beforeDeadline, boolean budget) {
        AtomicInteger withdrawn = new AtomicInteger();
        boolean retried = RetryPhase.allowed(idempotent, unprocessed, replayable, attemptsLeft, beforeDeadline, () -> {
            withdrawn.incrementAndGet();
            return budget;
        });

        // Safe to send twice: the method says so, or nothing of it reached an app.
        boolean safe = idempotent || unprocessed;
        assertThat(retried).isEqualTo(safe && replayable && attemptsLeft && beforeDeadline && budget);
        // The budget is only drawn on when every other condition already allows the retry.
        assertThat(withdrawn.get()).isEqualTo(safe && replayable && attemptsLeft && beforeDeadline ? 1 : 0);
    }
}
