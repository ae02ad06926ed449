package dev.weft.bench;

import java.time.Duration;
import java.util.Locale;

/**
 * The demo's warm-up rule: unrecorded load until the rate is stable, so that what the demo prints is the topology's
 * steady state and not a rate still climbing while nine fresh JVMs compile on two cores (issue 15: a fixed warm-up
 * left the default demo measuring a rate that climbed from about 900 to 3,400 QPS). Stable means two {@link #WINDOW}s
 * in a row within {@link #WITHIN} of each other; the cap bounds the wait, and the outcome says which ended it.
 *
 * <p>The windows are cut from one continuous load, the same one that then goes on to be measured. An earlier version
 * ran each window as a load of its own, which opened its 512 connections again every 5 s: each window's rate
 * understated a continuous load's, and on a fresh clone two such windows agreed at 2,100 QPS while the JIT was still
 * compiling, and the measured 30 s that followed gave 5,217 (docs/demo.md).
 *
 * <p>With a {@link JitSettle.Meter}, stable also needs the proxies' JIT compilers to have used under
 * {@link JitSettle#SETTLED_SHARE} of the proxies' CPU over the last window. A rate can hold still while the JIT is
 * still at work: on a fresh clone (2026-12-02, session 11) two windows agreed at 2,949 and 2,884 QPS 16 s in, the
 * measured 30 s that followed climbed from about 2,900 to 6,700, and the same topology did 7,018 a minute later.
 *
 * <p>Thread: the load generator's reporting thread, one second at a time ({@link #second}); not thread-safe. The
 * meter reads /proc once a window, on that thread.
 */
final class RateSettle {
    /** One window of load. */
    static final Duration WINDOW = Duration.ofSeconds(5);
    /** Two windows whose rates differ by at most this share of the higher one count as stable. */
    static final double WITHIN = 0.05;

    /**
     * @param took     unrecorded load it ran
     * @param previous the rate of the window before the last (NaN if fewer than two ended)
     * @param last     the rate of the last window (NaN if none ended)
     * @param jitShare the proxies' JIT's share of their CPU in the last window (NaN without a meter or a window)
     * @param capped   whether it stopped at the cap, not yet stable
     */
    record Outcome(Duration took, double previous, double last, double jitShare, boolean capped) {
        static final Outcome NONE = new Outcome(Duration.ZERO, Double.NaN, Double.NaN, Double.NaN, false);

        String describe() {
            if (took.isZero()) {
                return "none";
            }
            String rates = Double.isNaN(last) ? "no whole window"
                    : Double.isNaN(previous) ? String.format(Locale.ROOT, "%.0f QPS in the last window", last)
                    : String.format(Locale.ROOT, "%.0f then %.0f QPS in the last two %d s windows", previous, last,
                    WINDOW.toSeconds());
            String jit = Double.isNaN(jitShare) ? "" : String.format(Locale.ROOT, "; the sidecars' JIT %.0f%% of their"
                    + " CPU in the last window", jitShare * 100);
            return String.format(Locale.ROOT, "%d s, %s (%s%s)", Math.round(took.toMillis() / 1000.0),
                    capped ? "the cap, not yet stable" : "until stable", rates, jit);
        }
    }

    private final long windowNanos = WINDOW.toNanos();
    /** The proxies' CPU and its JIT part, or null to judge by the rate alone. */
    private final JitSettle.Meter meter;
    private long cpuAtWindowStart;
    private long jitAtWindowStart;
    private double jitShare = Double.NaN;
    private long tookNanos;
    private long windowFilledNanos;
    private long windowOk;
    private double previous = Double.NaN;
    private double last = Double.NaN;
    private boolean stable;

    /** @param meter the proxies' CPU, to wait for their JIT as well; null for the rate alone */
    RateSettle(JitSettle.Meter meter) {
        this.meter = meter;
        if (meter != null) {
            cpuAtWindowStart = meter.cpuNanos();
            jitAtWindowStart = meter.jitNanos();
        }
    }

    /**
     * Counts one second of the warm-up (the generator's {@link LoadGenerator.Tick}: its length and verified answers).
     *
     * @return true once the last two whole windows agree: the warm-up may end
     */
    boolean second(double seconds, long ok) {
        long nanos = Math.round(seconds * 1e9);
        tookNanos += nanos;
        windowFilledNanos += nanos;
        windowOk += ok;
        // The generator's seconds are whole seconds but for scheduling jitter; a window ends at its first second
        // past 5 s, and its rate is over the time it really covered.
        if (windowFilledNanos >= windowNanos - 100_000_000L) {
            double qps = windowOk / (windowFilledNanos / 1e9);
            boolean jitSettled = true;
            if (meter != null) {
                long cpu = meter.cpuNanos();
                long jit = meter.jitNanos();
                jitShare = cpu - cpuAtWindowStart <= 0 ? 0 : (double) (jit - jitAtWindowStart) / (cpu - cpuAtWindowStart);
                jitSettled = jitShare < JitSettle.SETTLED_SHARE;
                cpuAtWindowStart = cpu;
                jitAtWindowStart = jit;
            }
            stable = jitSettled && !Double.isNaN(last) && qps > 0
                    && Math.abs(qps - last) <= WITHIN * Math.max(qps, last);
            previous = last;
            last = qps;
            windowFilledNanos = 0;
            windowOk = 0;
        }
        return stable;
    }

    /** How the warm-up went; {@code capped} when it ended because its cap was spent. */
    Outcome outcome() {
        return tookNanos == 0 ? Outcome.NONE
                : new Outcome(Duration.ofNanos(tookNanos), previous, last, jitShare, !stable);
    }

    /**
     * {@code measured} with the warm-up's seconds also fed to this rule, which ends the warm-up once stable
     * ({@link LoadGenerator.PhaseListener#warmedUp}); the measured window's seconds are not counted.
     */
    LoadGenerator.PhaseListener around(LoadGenerator.PhaseListener measured) {
        return new LoadGenerator.PhaseListener() {
            private boolean warming = true;

            @Override
            public void measurementStarting() {
                warming = false;
                measured.measurementStarting();
            }

            @Override
            public void measurementEnded() {
                measured.measurementEnded();
            }

            @Override
            public void second(LoadGenerator.Tick tick) {
                measured.second(tick);
                if (warming) {
                    RateSettle.this.second(tick.seconds(), tick.ok());
                }
            }

            @Override
            public boolean warmedUp() {
                return stable;
            }
        };
    }
}
