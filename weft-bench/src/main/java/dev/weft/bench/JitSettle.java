package dev.weft.bench;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Loads a freshly started topology until its proxies' JIT compilers have settled, so that the measured window prices
 * the steady state of a long-running proxy rather than the one-time cost of compiling it.
 *
 * <p>Why: a JVM keeps compiling for a minute or more after its first load when nine processes share 2 cores. Measured
 * on 2026-12-02 with four Weft sidecars under the issue-12 load (wrk, 512 connections): their C1/C2 threads used
 * 52-66% of the sidecars' CPU in the first 25 s, 26-39% from 25 to 40 s, and 3-12% from 55 s on. A fixed 30 s
 * warm-up therefore charged a third of the window's proxy CPU to compilation, and charged more to whichever variant
 * compiles more code (observability on), while native proxies (nginx, HAProxy) pay none of it.
 *
 * <p>The proxies' total and JIT CPU are read from /proc ({@link ProcStats#treeJitCpuNanos}) around each
 * {@link #STEP} of load; the wait ends when the JIT used under {@link #SETTLED_SHARE} of the proxies' CPU in the
 * last step, or at the cap (then the result says so). Planes without JIT threads end at once.
 *
 * <p>Thread: the bench's thread that runs the load; blocking.
 */
final class JitSettle {
    /** One step of load between two readings. */
    static final Duration STEP = Duration.ofSeconds(5);
    /** JIT CPU under this share of the proxies' CPU over a step counts as settled. */
    static final double SETTLED_SHARE = 0.05;

    /** Runs one step of unrecorded load. */
    @FunctionalInterface
    interface Step {
        void run() throws InterruptedException;
    }

    /** Reads the proxies' CPU, all of it and the JIT's part, in nanoseconds. */
    interface Meter {
        long cpuNanos();

        long jitNanos();

        static Meter of(List<DataPlane.Proxy> proxies) {
            return new Meter() {
                @Override
                public long cpuNanos() {
                    return proxies.stream().mapToLong(p -> ProcStats.treeCpuNanos(p.pid())).sum();
                }

                @Override
                public long jitNanos() {
                    return proxies.stream().mapToLong(p -> ProcStats.treeJitCpuNanos(p.pid())).sum();
                }
            };
        }
    }

    /**
     * @param took      unrecorded load it ran
     * @param lastShare the JIT's share of the proxies' CPU in the last step (NaN when no step ran)
     * @param capped    whether it stopped at the cap, still compiling
     */
    record Outcome(Duration took, double lastShare, boolean capped) {
        static final Outcome NONE = new Outcome(Duration.ZERO, Double.NaN, false);

        String describe() {
            if (this == NONE || took.isZero()) {
                return "no JIT to settle";
            }
            return String.format(Locale.ROOT, "JIT %s after %ds of extra warm-up (JIT %.0f%% of the proxies' CPU in "
                    + "the last %ds)", capped ? "still busy at the cap" : "settled", took.toSeconds(),
                    lastShare * 100, STEP.toSeconds());
        }
    }

    private JitSettle() {}

    /** Steps of load until the JIT settles or {@code cap} is spent; nothing when the proxies have no JIT threads. */
    static Outcome run(Meter meter, Duration cap, Step step) throws InterruptedException {
        if (cap.isZero() || cap.isNegative() || meter.jitNanos() == 0) {
            return Outcome.NONE;
        }
        long start = System.nanoTime();
        double share = Double.NaN;
        while (true) {
            long cpu0 = meter.cpuNanos();
            long jit0 = meter.jitNanos();
            step.run();
            long cpu = meter.cpuNanos() - cpu0;
            long jit = meter.jitNanos() - jit0;
            share = cpu <= 0 ? 0 : (double) jit / cpu;
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            if (share < SETTLED_SHARE) {
                return new Outcome(took, share, false);
            }
            if (took.compareTo(cap) >= 0) {
                return new Outcome(took, share, true);
            }
        }
    }
}
