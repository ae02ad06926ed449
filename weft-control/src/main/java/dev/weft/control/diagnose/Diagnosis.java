package dev.weft.control.diagnose;

import java.util.List;
import java.util.Map;

/**
 * The answer of {@code GET /v1/diagnose} and {@code ./weft diagnose --json}. The dashboard reads it: the fields
 * named in docs/observability.md ("Culprit finding") are stable; others may be added.
 *
 * @param verdict      one line: the root cause, or why there is none
 * @param healthy      true when no culprit, no overload and no SLO violation was found
 * @param culprits     ranked, highest score first
 * @param backPressure services queueing or shedding because a callee is slow: symptoms, not causes
 * @param waiting      services whose latency is mostly waiting on a culprit downstream (not causes either)
 * @param overloaded   with no culprit: services over their limit (queueing or shedding with flat self times)
 * @param violations   services over their SLO (or, without one, over twice their baseline p99 or 1% errors)
 */
public record Diagnosis(String verdict, boolean healthy, List<Culprit> culprits, List<BackPressure> backPressure,
                        List<String> waiting, List<Overloaded> overloaded, List<Violation> violations, Window window) {

    /**
     * A root-cause candidate.
     *
     * @param endpoint         the instance's address when one instance of the service is at fault, null for the
     *                         whole service
     * @param endpointId       that instance's id, when known
     * @param kind             {@code latency} (its own time grew) or {@code errors} (it originates errors)
     * @param score            latency: self time now / before; errors: own error rate / the threshold
     * @param selfTimeBeforeMs p90 self time in the baseline
     * @param selfTimeNowMs    p90 self time in the window
     * @param queueTimeMs      p90 queue time (waiting for a slot at its sidecar) in the window
     * @param errorKinds       errors it originated in the window, by kind (an {@code x-weft-error} kind or status)
     * @param traceIds         up to 5 traces that show it (the slowest self times, or its own errors)
     */
    public record Culprit(String service, String endpoint, String endpointId, String kind, double score,
                          double selfTimeBeforeMs, double selfTimeNowMs, double queueTimeMs, double errorRate,
                          long requests, Map<String, Long> errorKinds, List<String> traceIds) {}

    /**
     * @param waitingOn      the callee it waits for (on the way to the culprit)
     * @param queueTimeBeforeMs p90 of its calls' queue time to that callee, baseline
     * @param queueTimeNowMs p90 now
     * @param shed           its calls to the callee its sidecar refused at once in the window (outbound limit,
     *                       queue full or timed out, rate limit)
     */
    public record BackPressure(String service, String waitingOn, double queueTimeBeforeMs, double queueTimeNowMs,
                               long shed) {}

    public record Overloaded(String service, String reason) {}

    /**
     * @param what  {@code p99} or {@code error-rate}
     * @param now   the value in the window (ms, or a fraction)
     * @param limit the SLO's, or the default rule's (twice the baseline p99; 1%)
     */
    public record Violation(String service, String what, double now, double limit, boolean fromSlo) {}

    /** What the analysis looked at: epoch ms, and how many traces fell in each part. */
    public record Window(long fromMs, long toMs, long baselineFromMs, long windowTraces, long baselineTraces,
                         long spans) {}
}
