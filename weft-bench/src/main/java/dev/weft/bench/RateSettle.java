package dev.weft.bench;

import java.time.Duration;
import java.util.Locale;

/**
 * The demo's warm-up: unrecorded load in {@link #STEP}s until the rate is stable, so that what the demo prints is
 * the topology's steady state and not a rate still climbing while nine fresh JVMs compile on two cores (issue 15:
 * a fixed warm-up left the default demo measuring a rate that climbed from about 900 to 3,400 QPS). Stable means
 * two steps in a row within {@link #WITHIN} of each other; the cap bounds the wait, and the outcome says which
 * ended it.
 *
 * <p>Thread: the demo's thread that runs the load; blocking.
 */
final class RateSettle {
    /** One step of load. */
    static final Duration STEP = Duration.ofSeconds(5);
    /** Two steps whose rates differ by at most this share of the higher one count as stable. */
    static final double WITHIN = 0.05;

    /** Runs one step of unrecorded load of the given length and returns its rate (successes per second). */
    @FunctionalInterface
    interface Step {
        double run(Duration length) throws InterruptedException;
    }

    /**
     * @param took     unrecorded load it ran
     * @param previous the rate of the step before the last (NaN if only one ran)
     * @param last     the rate of the last step (NaN if none ran)
     * @param capped   whether it stopped at the cap, not yet stable
     */
    record Outcome(Duration took, double previous, double last, boolean capped) {
        static final Outcome NONE = new Outcome(Duration.ZERO, Double.NaN, Double.NaN, false);

        String describe() {
            if (took.isZero()) {
                return "none";
            }
            String rates = Double.isNaN(previous) ? String.format(Locale.ROOT, "%.0f QPS in the last step", last)
                    : String.format(Locale.ROOT, "%.0f then %.0f QPS in the last two %d s steps", previous, last,
                    STEP.toSeconds());
            return String.format(Locale.ROOT, "%d s, %s (%s)", Math.round(took.toMillis() / 1000.0),
                    capped ? "the cap, not yet stable" : "until stable", rates);
        }
    }

    private RateSettle() {}

    /** Steps until two in a row are within {@link #WITHIN}, or {@code cap} is spent; nothing for a zero cap. */
    static Outcome run(Duration cap, Step step) throws InterruptedException {
        if (cap.isZero() || cap.isNegative()) {
            return Outcome.NONE;
        }
        Duration length = cap.compareTo(STEP) < 0 ? cap : STEP;
        // Counted in steps, not read from the clock: a step's connections take a moment to open and close, and
        // the cap is a budget of load.
        Duration took = Duration.ZERO;
        double previous = Double.NaN;
        while (true) {
            double qps = step.run(length);
            took = took.plus(length);
            if (!Double.isNaN(previous) && qps > 0 && Math.abs(qps - previous) <= WITHIN * Math.max(qps, previous)) {
                return new Outcome(took, previous, qps, false);
            }
            if (took.plus(length).compareTo(cap) > 0) {
                return new Outcome(took, previous, qps, true);
            }
            previous = qps;
        }
    }
}
