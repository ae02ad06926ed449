package dev.weft.control.diagnose;

import java.time.Duration;

/**
 * A service's objective, from the {@code slo:} key of its policy document ({@code slo: {p99: 200ms, error-rate: 1%}}).
 * Either part may be absent (null): the default rule then applies to it, a p99 above twice the service's own baseline
 * or an error rate above 1%.
 */
public record Slo(Duration p99, Double errorRate) {
    public static final double DEFAULT_ERROR_RATE = 0.01;
}
