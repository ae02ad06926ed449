package dev.weft.control.diagnose;

import dev.weft.control.diagnose.Diagnosis.BackPressure;
import dev.weft.control.diagnose.Diagnosis.Culprit;
import dev.weft.control.diagnose.Diagnosis.Overloaded;
import dev.weft.control.diagnose.Diagnosis.Violation;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The one-line verdict and the reasons, in words. */
final class Verdicts {
    private Verdicts() {}

    static String verdict(List<Culprit> culprits, List<BackPressure> backPressure, List<String> waiting,
                          List<Overloaded> overloaded, List<Violation> violations, Diagnosis.Window window,
                          long windowMicros) {
        String span = seconds(windowMicros);
        if (!culprits.isEmpty()) {
            Culprit c = culprits.getFirst();
            StringBuilder sb = new StringBuilder(name(c));
            if (c.kind().equals("latency")) {
                sb.append(" is ").append(number(c.score())).append("× slower in its own time (p90 ")
                        .append(millis(c.selfTimeBeforeMs())).append(" → ").append(millis(c.selfTimeNowMs()))
                        .append(")");
            } else {
                sb.append(" originates ").append(percent(c.errorRate())).append(" errors (")
                        .append(kinds(c.errorKinds())).append(")");
            }
            if (!waiting.isEmpty() && c.kind().equals("latency")) {
                sb.append("; ").append(and(waiting)).append(waiting.size() == 1 ? " is" : " are").append(" waiting on it");
            } else if (!waiting.isEmpty()) {
                sb.append("; ").append(and(waiting)).append(waiting.size() == 1 ? " passes" : " pass")
                        .append(" its errors back");
            }
            for (BackPressure b : backPressure) {
                sb.append("; ").append(b.service()).append(" queues for ").append(b.waitingOn())
                        .append(" (back-pressure, not a cause)");
            }
            if (culprits.size() > 1) {
                sb.append("; ").append(culprits.size() - 1).append(" more below");
            }
            return sb.toString();
        }
        if (!overloaded.isEmpty()) {
            return "no culprit: no service's own time grew; " + overloaded.stream()
                    .map(o -> o.service() + " is over its limit (" + o.reason() + ")")
                    .collect(Collectors.joining("; "));
        }
        if (!violations.isEmpty()) {
            Violation v = violations.getFirst();
            return "no culprit found: " + v.service() + " is over its " + (v.fromSlo() ? "SLO" : "baseline") + " ("
                    + (v.what().equals("p99") ? "p99 " + millis(v.now()) + " > " + millis(v.limit())
                    : "error rate " + percent(v.now()) + " > " + percent(v.limit()))
                    + ") but no service's own time or own errors grew";
        }
        if (window.windowTraces() == 0) {
            return "no traces in the last " + span + ": nothing to judge (are sidecars exporting spans here?)";
        }
        return "healthy: " + window.windowTraces() + " traces in the last " + span
                + ", no service over its SLO or its baseline";
    }

    static String edgeReason(Period.Edge edge, Period.EdgeStats n, long qBefore, long qNow) {
        StringBuilder sb = new StringBuilder();
        if (n.shed > 0) {
            sb.append("its sidecar refused ").append(n.shed).append(" of ").append(n.requests)
                    .append(" calls to ").append(edge.callee()).append(" at once (").append(kinds(n.shedKinds))
                    .append(")");
        }
        if (qNow - qBefore > 0 && qNow >= 2 * Math.max(qBefore, 100)) {
            sb.append(sb.isEmpty() ? "" : ", ").append("queue time to ").append(edge.callee()).append(" p90 ")
                    .append(millis(Analysis.ms(qBefore))).append(" → ").append(millis(Analysis.ms(qNow)));
        }
        return sb.append(", with flat self times").toString();
    }

    static String inboundReason(String service, Period.ServiceStats n, long qBefore, long qNow) {
        StringBuilder sb = new StringBuilder();
        if (n.inboundShed > 0) {
            sb.append("its sidecar refused ").append(n.inboundShed).append(" of ").append(n.serverRequests)
                    .append(" requests at once (").append(kinds(n.shedKinds)).append(")");
        }
        if (qNow > qBefore) {
            sb.append(sb.isEmpty() ? "" : ", ").append("inbound queue time p90 ").append(millis(Analysis.ms(qBefore)))
                    .append(" → ").append(millis(Analysis.ms(qNow)));
        }
        return sb.append(", with flat self times").toString();
    }

    static String name(Culprit c) {
        if (c.endpoint() == null) {
            return c.service();
        }
        return c.service() + " endpoint " + c.endpoint() + (c.endpointId() == null ? "" : " (" + c.endpointId() + ")");
    }

    static String kinds(Map<String, Long> kinds) {
        return kinds.entrySet().stream().map(e -> e.getKey() + " ×" + e.getValue()).collect(Collectors.joining(", "));
    }

    static String and(List<String> names) {
        if (names.size() == 1) {
            return names.getFirst();
        }
        return String.join(", ", names.subList(0, names.size() - 1)) + " and " + names.getLast();
    }

    static String millis(double ms) {
        return ms < 10 ? String.format(Locale.ROOT, "%.1f ms", ms) : String.format(Locale.ROOT, "%.0f ms", ms);
    }

    static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f%%", fraction * 100);
    }

    static String number(double v) {
        return v < 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.0f", v);
    }

    private static String seconds(long micros) {
        long s = micros / 1_000_000;
        return s % 60 == 0 && s >= 60 ? (s / 60) + " min" : s + " s";
    }
}
