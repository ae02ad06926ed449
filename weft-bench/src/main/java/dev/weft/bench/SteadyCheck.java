package dev.weft.bench;

import dev.weft.registry.support.Durations;

import java.time.Duration;
import java.util.Locale;

/**
 * Issue 15's check on what the demo prints: is it the topology's steady state? The same topology is measured again,
 * for as long, after another {@code gap} of load; the demo's rate counts as steady when it is within {@link #WITHIN}
 * of that second window's. Both rates are measured windows of real load ({@link Experiment#measureAgain}), never an
 * estimate, so a warm-up that ended too early (the rate still climbing) shows here as a first window well under the
 * second.
 *
 * @param first the demo's measured window
 * @param again the same topology's second measured window, {@code gap} later
 * @param gap   unrecorded load between the two windows
 */
public record SteadyCheck(LoadResult first, LoadResult again, Duration gap) {
    /** Issue 15: "the default demo reports within 10 % of its own steady state". */
    public static final double WITHIN = 0.10;

    /** The demo's rate as a share of the steady state's; NaN when the second window served nothing. */
    public double ratio() {
        return again.qps() > 0 ? first.qps() / again.qps() : Double.NaN;
    }

    /** Within {@link #WITHIN} of the steady state, above or below. */
    public boolean steady() {
        double r = ratio();
        return !Double.isNaN(r) && Math.abs(r - 1) <= WITHIN;
    }

    /** The demo's {@code steady state} line. */
    public String describe() {
        if (Double.isNaN(ratio())) {
            return "no request succeeded when measured again after another " + Durations.format(gap)
                    + " of load: no verdict (" + again.errors().describe() + ")";
        }
        return String.format(Locale.ROOT, "%.1f QPS measured again after another %s of load: the first window was "
                        + "%.1f%% of it, %s", again.qps(), Durations.format(gap), ratio() * 100,
                steady() ? "within " + Math.round(WITHIN * 100) + "% (steady)"
                        : "NOT within " + Math.round(WITHIN * 100) + "% (not yet the steady state)");
    }
}
