package dev.weft.examples;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Faults a provider can be told to inject, so resilience can be tested against a real misbehaving instance:
 * slower answers ({@code factor} × the delay plus {@code extraDelayMs}), a share of 500 answers ({@code errorRate}),
 * a stall (requests are admitted and never answered), or a crash (the process halts at once, like kill -9).
 * Set by flags at start or at run time with {@code POST /fault?factor=10&error-rate=0.2&stall=false&crash=false}.
 * The example consumer takes {@code POST /fault?error-rate=0.2} (its own 500s, before calling the provider).
 *
 * <p>Threads: written by the admin request's event loop, read by every connection's: plain volatile fields.
 */
public final class Faults {
    volatile double factor = 1;
    volatile long extraDelayMs;
    volatile double errorRate;
    volatile boolean stall;

    /** An error rate from its text: a number from 0 to 1. */
    static double rate(String text) {
        try {
            double r = Double.parseDouble(text.trim());
            if (r >= 0 && r <= 1) {
                return r;
            }
        } catch (NumberFormatException e) {
            // the message below says what was expected
        }
        throw new IllegalArgumentException("bad error-rate '" + text + "' (expected a number from 0 to 1)");
    }

    boolean failNow() {
        double rate = errorRate;
        return rate > 0 && ThreadLocalRandom.current().nextDouble() < rate;
    }

    long delayNanos(long baseNanos) {
        return Math.round(baseNanos * factor) + extraDelayMs * 1_000_000L;
    }

    String toJson() {
        return "{\"factor\":" + factor + ",\"extraDelayMs\":" + extraDelayMs + ",\"errorRate\":" + errorRate
                + ",\"stall\":" + stall + "}";
    }
}
