package dev.weft.control.diagnose;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One trace's spans as a call tree, with each span's <em>self time</em>: its duration minus the time covered by its
 * children (the union of their intervals, clipped to the span, so overlapping calls and retries count once).
 *
 * <p>Self time is what tells a slow service from one that waits on a slow callee. A SERVER span's children are its
 * app's outbound calls (the CLIENT spans its sidecar made with the trace context the app passed on), so its self
 * time is the app's own work plus the inbound sidecar; a CLIENT span's child is the callee's SERVER span, so its self
 * time is its queue wait, the network and the callee's sidecar before the callee's span began.
 *
 * <p>Threads: built and read by one thread.
 */
final class CallTree {
    private final List<DiagnoseSpan> spans;
    private final Map<String, Integer> byId;
    private final int[] parent;
    private final List<List<Integer>> children;
    private final long[] self;

    CallTree(List<DiagnoseSpan> spans) {
        this.spans = spans;
        int n = spans.size();
        byId = new HashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
            // A span id seen twice in a trace (a retried export) keeps its first copy.
            byId.putIfAbsent(spans.get(i).id(), i);
        }
        parent = new int[n];
        children = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            children.add(new ArrayList<>(2));
        }
        for (int i = 0; i < n; i++) {
            String p = spans.get(i).parentId();
            Integer pi = p == null ? null : byId.get(p);
            parent[i] = pi == null || pi == i ? -1 : pi;
            if (parent[i] >= 0 && byId.get(spans.get(i).id()) == i) {
                children.get(parent[i]).add(i);
            }
        }
        self = new long[n];
        for (int i = 0; i < n; i++) {
            self[i] = computeSelf(i);
        }
    }

    int size() {
        return spans.size();
    }

    DiagnoseSpan span(int i) {
        return spans.get(i);
    }

    /** The parent's index, or -1 for a root (no parent, or a parent this trace does not hold). */
    int parent(int i) {
        return parent[i];
    }

    List<Integer> children(int i) {
        return children.get(i);
    }

    long selfMicros(int i) {
        return self[i];
    }

    /** Whether the span is a duplicate of an earlier one with the same id (ignored by the analysis). */
    boolean duplicate(int i) {
        return byId.get(spans.get(i).id()) != i;
    }

    private long computeSelf(int i) {
        DiagnoseSpan s = spans.get(i);
        List<Integer> kids = children.get(i);
        if (kids.isEmpty()) {
            return s.durationMicros();
        }
        long from = s.startMicros();
        long to = s.endMicros();
        long[][] intervals = new long[kids.size()][];
        int k = 0;
        for (int c : kids) {
            DiagnoseSpan child = spans.get(c);
            long a = Math.max(from, child.startMicros());
            long b = Math.min(to, child.endMicros());
            if (b > a) {
                intervals[k++] = new long[]{a, b};
            }
        }
        Arrays.sort(intervals, 0, k, (x, y) -> Long.compare(x[0], y[0]));
        long covered = 0;
        long curA = -1;
        long curB = -1;
        for (int j = 0; j < k; j++) {
            long a = intervals[j][0];
            long b = intervals[j][1];
            if (curB < a) {
                covered += curB - curA;
                curA = a;
                curB = b;
            } else if (b > curB) {
                curB = b;
            }
        }
        covered += curB - curA;
        return Math.max(0, s.durationMicros() - covered);
    }
}
