package dev.weft.control.cli;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Renders traces for the terminal: one trace as a waterfall (a bar per span, on a common time axis, with the
 * sidecar's steps drawn inside it) and a list of traces as a table.
 *
 * <p>Inside a Weft span's bar: {@code q} waiting for capacity (queue), {@code c} connecting and sending the
 * head, {@code -} waiting for the answer's first byte (on an inbound span, the local app's own time), {@code =}
 * the answer streaming back. Spans from other tracers (no step annotations) are drawn with {@code #}.
 */
final class Waterfall {
    static final String LEGEND = "legend: q queue wait · c connect and send · - waiting for the first byte"
            + " (inbound: the app's time) · = answer body · # span without Weft steps";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS 'UTC'")
            .withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter SHORT_TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);

    private Waterfall() {}

    /** What a trace list shows of one trace. */
    record Summary(String traceId, long start, long duration, int spans, boolean failed, String status, String root,
                   String services) {}

    static Summary summarize(List<TraceSpan> trace) {
        long start = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        boolean failed = false;
        for (TraceSpan s : trace) {
            start = Math.min(start, s.timestamp());
            end = Math.max(end, s.end());
            failed |= s.failed();
        }
        List<TraceSpan> ordered = ordered(trace);
        TraceSpan root = ordered.isEmpty() ? null : ordered.getFirst();
        Set<String> services = new LinkedHashSet<>();
        trace.stream().sorted(Comparator.comparingLong(TraceSpan::timestamp)).forEach(s -> {
            if (s.localService() != null) {
                services.add(s.localService());
            }
            if (s.remoteService() != null) {
                services.add(s.remoteService());
            }
        });
        String status = root == null ? "-" : root.tags().getOrDefault("http.status_code", "-");
        String rootName = root == null ? "-" : describe(root);
        return new Summary(trace.isEmpty() ? "" : trace.getFirst().traceId(), start == Long.MAX_VALUE ? 0 : start,
                Math.max(0, end - start), trace.size(), failed, status, rootName, String.join(" → ", services));
    }

    private static String describe(TraceSpan s) {
        String method = s.tags().get("http.method");
        String path = s.tags().get("http.path");
        String what = method != null ? method + " " + (path == null ? "" : abbreviate(path, 40))
                : s.name() == null ? "?" : s.name();
        return what;
    }

    static String renderList(List<Summary> shown, int total, String window, boolean failedFirst) {
        if (total == 0) {
            return "no traces in the last " + window + " (are sidecars sending spans here? see docs/observability.md)\n";
        }
        Table t = new Table("TRACE ID", "START (UTC)", "DURATION", "SPANS", "STATUS", "REQUEST", "PATH").left(4, 5, 6);
        for (Summary s : shown) {
            t.add(s.traceId(), SHORT_TIME.format(Instant.ofEpochSecond(0, s.start() * 1000)),
                    MeshStats.millis(s.duration() / 1000.0), String.valueOf(s.spans()),
                    s.failed() ? s.status() + " FAILED" : s.status(), s.root(), s.services());
        }
        long failed = shown.stream().filter(Summary::failed).count();
        return t.render() + String.format(Locale.ROOT, "%d of %d traces examined from the last %s (%d failed shown), %s.%n"
                        + "./weft trace ID prints one as a waterfall.%n", shown.size(), total, window, failed,
                failedFirst ? "failed first, then slowest" : "newest first");
    }

    /** Spans in tree order: each root by start time, then its children depth first. */
    static List<TraceSpan> ordered(List<TraceSpan> trace) {
        List<TraceSpan> out = new ArrayList<>();
        for (Node n : tree(trace)) {
            n.flatten(out);
        }
        return out;
    }

    private record Node(TraceSpan span, int depth, List<Node> children) {
        void flatten(List<TraceSpan> out) {
            out.add(span);
            children.forEach(c -> c.flatten(out));
        }

        void flattenNodes(List<Node> out) {
            out.add(this);
            children.forEach(c -> c.flattenNodes(out));
        }
    }

    private static List<Node> tree(List<TraceSpan> trace) {
        Map<String, List<TraceSpan>> byParent = new HashMap<>();
        Set<String> ids = new HashSet<>();
        for (TraceSpan s : trace) {
            ids.add(s.id());
        }
        List<TraceSpan> roots = new ArrayList<>();
        for (TraceSpan s : trace) {
            if (s.parentId() == null || !ids.contains(s.parentId()) || s.parentId().equals(s.id())) {
                roots.add(s);
            } else {
                byParent.computeIfAbsent(s.parentId(), k -> new ArrayList<>()).add(s);
            }
        }
        roots.sort(Comparator.comparingLong(TraceSpan::timestamp));
        List<Node> nodes = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (TraceSpan r : roots) {
            nodes.add(node(r, 0, byParent, seen));
        }
        return nodes;
    }

    private static Node node(TraceSpan s, int depth, Map<String, List<TraceSpan>> byParent, Set<String> seen) {
        List<Node> children = new ArrayList<>();
        if (seen.add(s.id() + "/" + s.kind())) {
            List<TraceSpan> kids = new ArrayList<>(byParent.getOrDefault(s.id(), List.of()));
            kids.sort(Comparator.comparingLong(TraceSpan::timestamp));
            for (TraceSpan k : kids) {
                children.add(node(k, depth + 1, byParent, seen));
            }
        }
        return new Node(s, depth, children);
    }

    static String render(List<TraceSpan> trace, int barWidth) {
        if (trace.isEmpty()) {
            return "empty trace\n";
        }
        Summary sum = summarize(trace);
        long start = sum.start();
        long total = Math.max(1, sum.duration());
        List<Node> nodes = new ArrayList<>();
        for (Node n : tree(trace)) {
            n.flattenNodes(nodes);
        }
        StringBuilder sb = new StringBuilder();
        sb.append("trace ").append(sum.traceId()).append("  ").append(sum.spans()).append(" spans  ")
                .append(MeshStats.millis(total / 1000.0)).append("  ").append(sum.services()).append("  started ")
                .append(TIME.format(Instant.ofEpochSecond(0, start * 1000))).append(sum.failed() ? "  FAILED" : "")
                .append("\n\n");
        String totalLabel = MeshStats.millis(total / 1000.0);
        Table t = new Table("SPAN", "REQUEST", "STATUS", "DURATION",
                " 0" + " ".repeat(Math.max(1, barWidth - 1 - totalLabel.length())) + totalLabel + " ").left(1, 4);
        List<String> details = new ArrayList<>();
        for (Node n : nodes) {
            TraceSpan s = n.span();
            String indent = "  ".repeat(n.depth());
            String status = s.tags().getOrDefault("http.status_code", "-");
            if (s.failed()) {
                status += " ✗";
            }
            t.add(indent + label(s), describe(s), status, MeshStats.millis(s.duration() / 1000.0),
                    "|" + bar(s, start, total, barWidth) + "|");
            details.add(indent + label(s) + ": " + steps(s));
        }
        sb.append(t.render()).append('\n');
        for (String d : details) {
            sb.append(d).append('\n');
        }
        sb.append('\n').append(LEGEND).append('\n');
        return sb.toString();
    }

    private static String label(TraceSpan s) {
        String local = s.localService() == null ? "?" : s.localService();
        if ("CLIENT".equals(s.kind())) {
            return local + " → " + (s.remoteService() == null ? "?" : s.remoteService());
        }
        if ("SERVER".equals(s.kind())) {
            return local + " (inbound)";
        }
        return local + (s.name() == null ? "" : " " + s.name());
    }

    /** The step durations a sidecar recorded, and where the request went. */
    static String steps(TraceSpan s) {
        List<String> parts = new ArrayList<>();
        long admitted = s.at("admitted");
        long connected = s.at("connected");
        long sent = s.at("sent");
        long firstByte = s.at("first-byte");
        if (admitted > 0) {
            parts.add("queue " + MeshStats.millis((admitted - s.timestamp()) / 1000.0));
        }
        if (connected > 0 && admitted > 0) {
            parts.add("connect " + MeshStats.millis((connected - admitted) / 1000.0));
        }
        if (sent > 0 && firstByte > 0) {
            parts.add(("SERVER".equals(s.kind()) ? "app " : "upstream ") + MeshStats.millis((firstByte - sent) / 1000.0));
        }
        if (firstByte > 0) {
            parts.add("answer " + MeshStats.millis((s.end() - firstByte) / 1000.0));
        }
        if (parts.isEmpty()) {
            parts.add(s.tags().containsKey("weft.direction") ? "never admitted" : "no step annotations");
        }
        String endpoint = s.tags().get("weft.endpoint");
        if (endpoint != null && "CLIENT".equals(s.kind())) {
            parts.add("endpoint " + endpoint + " (" + s.tags().getOrDefault("weft.endpoint.address", "?") + ")");
        }
        String attempts = s.tags().get("weft.attempts");
        if (attempts != null) {
            parts.add(attempts + " attempts");
        }
        String error = s.tags().get("error");
        if (error != null) {
            parts.add("error " + error);
        }
        return String.join(" · ", parts);
    }

    static String bar(TraceSpan s, long traceStart, long total, int width) {
        char[] cells = new char[width];
        // A Weft span without steps ended before admission (refused, or timed out waiting): all of it was the wait.
        boolean anyStep = s.tags().containsKey("weft.direction") || s.at("admitted") > 0 || s.at("sent") > 0
                || s.at("first-byte") > 0;
        boolean drawn = false;
        for (int i = 0; i < width; i++) {
            double t = traceStart + (i + 0.5) * total / width;
            if (t < s.timestamp() || t > s.end()) {
                cells[i] = ' ';
                continue;
            }
            cells[i] = anyStep ? step(s, t) : '#';
            drawn = true;
        }
        if (!drawn) {
            // Shorter than a cell: still visible, at its start.
            int i = (int) Math.min(width - 1, Math.max(0, (s.timestamp() - traceStart) * width / total));
            cells[i] = anyStep ? step(s, s.timestamp()) : '#';
        }
        return new String(cells);
    }

    private static char step(TraceSpan s, double t) {
        long admitted = s.at("admitted");
        long sent = s.at("sent");
        long firstByte = s.at("first-byte");
        if (admitted == 0 || t < admitted) {
            return 'q';
        }
        if (sent > 0 && t < sent) {
            return 'c';
        }
        if (firstByte > 0 && t < firstByte) {
            return '-';
        }
        return firstByte > 0 ? '=' : '-';
    }

    private static String abbreviate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }
}
