package dev.weft.bench;

import dev.weft.registry.support.Durations;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;

/**
 * What one measured run of the {@link LoadGenerator} saw. Warm-up traffic is not in any of these numbers.
 *
 * @param requests   answers and failures in the measured window: {@code successes + errors.total()}
 * @param successes  verified answers (status 200 and the right hash)
 * @param qps        successes per second of measured time
 * @param latency    of successful requests, from write to the last byte of the answer
 * @param ceilingQps what the connections could do at best if every request took exactly the service delay
 *                   ({@code connections / delay}); NaN when no delay was given
 * @param cpu        CPU time of the generator's whole process during the measured window
 */
public record LoadResult(URI url, int connections, int threads, Duration warmup, Duration measured, long requests,
                         long successes, ErrorCounts errors, double qps, Latency latency, double ceilingQps,
                         Duration serviceDelay, Duration cpu) {

    /** Percentiles in milliseconds; all zero when nothing succeeded. */
    public record Latency(double p50Ms, double p90Ms, double p99Ms, double maxMs, long samples) {}

    /** QPS as a fraction of the closed-loop ceiling: 1.0 means the mesh and apps added nothing to the delay. */
    public double ceilingRatio() {
        return Double.isNaN(ceilingQps) || ceilingQps == 0 ? Double.NaN : qps / ceilingQps;
    }

    public double cpuCores() {
        return measured.isZero() ? 0 : (double) cpu.toNanos() / measured.toNanos();
    }

    public double cpuMicrosPerRequest() {
        return requests == 0 ? 0 : cpu.toNanos() / 1_000.0 / requests;
    }

    /** The results block printed by {@code weft load} and {@code weft demo}. */
    public String describe() {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "  target         POST %s, %d connections on %d thread%s, %s measured%s%n",
                url, connections, threads, threads == 1 ? "" : "s", Durations.format(measured),
                warmup.isZero() ? "" : " after " + Durations.format(warmup) + " warm-up"));
        if (Double.isNaN(ceilingQps)) {
            out.append(String.format(Locale.ROOT, "  QPS            %.1f%n", qps));
        } else {
            out.append(String.format(Locale.ROOT,
                    "  QPS            %.1f  (ceiling %.0f = %d connections / %d ms; ratio %.2f)%n",
                    qps, ceilingQps, connections, serviceDelay.toMillis(), ceilingRatio()));
        }
        out.append(String.format(Locale.ROOT, "  latency        p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms%n",
                latency.p50Ms(), latency.p90Ms(), latency.p99Ms(), latency.maxMs()));
        out.append(String.format(Locale.ROOT, "  requests       %d (%d ok, %d errors)%n",
                requests, successes, errors.total()));
        out.append(String.format(Locale.ROOT, "  errors         %s%n", errors.describe()));
        out.append(String.format(Locale.ROOT, "  generator CPU  %.2f s (%.2f cores, %.1f µs per request)%n",
                cpu.toNanos() / 1e9, cpuCores(), cpuMicrosPerRequest()));
        return out.toString();
    }
}
