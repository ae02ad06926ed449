package dev.weft.bench;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

import static dev.weft.bench.BenchReport.f;
import static dev.weft.bench.BenchReport.row;

/**
 * Issue 13's part of the report: what mutual TLS on the link between the two proxy roles costs, with Weft's mTLS
 * ({@code weft-mtls} against {@code weft-off}) beside HAProxy's and nginx's TLS ({@code haproxy-tls},
 * {@code nginx-tls}), and the handshakes Weft's sidecars counted in each window. Shown only when a TLS plane ran.
 */
final class TlsReport {
    /** The planes that make a run one about TLS on the link. */
    static final Set<String> PLANES = Set.of("weft-mtls", "weft-off", "nginx-tls", "haproxy-tls");

    private TlsReport() {}

    static boolean ran(List<BenchRow> rows) {
        return rows.stream().anyMatch(r -> PLANES.contains(r.plane()));
    }

    /**
     * Every plane of one section with the link it uses, its CPU per request (per hop: half the pair's) and the TLS
     * handshakes per second; empty when no TLS plane ran.
     */
    static String table(String section, List<BenchRow> medians) {
        if (!ran(medians)) {
            return "";
        }
        boolean hop = section.equals("hop");
        StringBuilder t = new StringBuilder("### The link between the proxies: mutual TLS against plaintext\n\n"
                + "TLS handshakes/s: `weft_tls_handshakes_total` of every Weft sidecar over the window (both ends of "
                + "a handshake count it), per second; empty for planes that export no such counter.\n\n"
                + "| plane | link | threads | conns | QPS | p99 ms | " + (hop ? "CPU µs/req per hop" : "proxy CPU µs/req")
                + " | TLS handshakes/s | errors |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (BenchRow r : medians) {
            if (r.plane().equals(DirectDataPlane.NAME)) {
                continue;
            }
            t.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %s | %s | %s | %s | %d |%n", r.plane(),
                    Bench.link(r.plane()), BenchRow.threadsLabel(r.threads()), r.connections(), f(r.qps(), 0),
                    f(r.p99Ms(), hop ? 2 : 1), f(hop ? r.proxyCpuUsPerReq() / 2 : r.proxyCpuUsPerReq(), 1),
                    f(r.tlsHandshakesPerSec(), 2), r.errors()));
        }
        return t.append('\n').toString();
    }

    /**
     * Issue 13's targets at one thread count: Weft's per-hop CPU with mTLS at most HAProxy's with TLS; mTLS costing
     * Weft at most 15% CPU per request over {@code off} (mesh at {@code top} connections, and per hop); no TLS
     * handshake in any measured window of {@code weft-mtls}.
     *
     * @param rounds every round's rows of this thread count, not medians: a handshake in one window is not hidden by
     *               a median of zero
     */
    static String targets(List<BenchRow> mesh, List<BenchRow> hop, List<BenchRow> rounds, int top, String where) {
        StringBuilder t = new StringBuilder();
        BenchRow mtlsHop = plane(hop, "weft-mtls");
        BenchRow haproxyHop = plane(hop, "haproxy-tls");
        if (mtlsHop != null && haproxyHop != null) {
            double w = mtlsHop.proxyCpuUsPerReq() / 2;
            double h = haproxyHop.proxyCpuUsPerReq() / 2;
            t.append(row("per hop" + where + ": Weft CPU with mTLS ≤ HAProxy's with TLS", f(w, 1) + " vs " + f(h, 1)
                    + " µs/req per hop", w <= h));
        }
        Predicate<BenchRow> atTop = r -> r.connections() == top;
        cost(t, "mesh " + top + where, plane(mesh.stream().filter(atTop).toList(), "weft-mtls"),
                plane(mesh.stream().filter(atTop).toList(), "weft-off"));
        cost(t, "per hop" + where, mtlsHop, plane(hop, "weft-off"));
        for (String section : List.of("mesh", "hop")) {
            List<BenchRow> windows = rounds.stream().filter(r -> r.ok() && r.section().equals(section)
                    && r.plane().equals("weft-mtls")).toList();
            if (windows.isEmpty()) {
                continue;
            }
            double max = windows.stream().mapToDouble(BenchRow::tlsHandshakesPerSec).max().orElse(Double.NaN);
            boolean measured = windows.stream().noneMatch(r -> Double.isNaN(r.tlsHandshakesPerSec()));
            t.append(row((section.equals("hop") ? "per hop" : "mesh") + where + ": TLS handshakes at steady load = 0/s",
                    measured ? String.format(Locale.ROOT, "at most %s/s in %d measured window(s) of weft-mtls",
                            f(max, 2), windows.size()) : "not measured (a sidecar's /metrics did not answer)",
                    measured && max == 0));
        }
        return t.toString();
    }

    private static void cost(StringBuilder t, String where, BenchRow mtls, BenchRow off) {
        if (mtls == null || off == null) {
            return;
        }
        double cost = mtls.proxyCpuUsPerReq() / off.proxyCpuUsPerReq() - 1;
        t.append(row(where + ": mTLS costs Weft ≤ 15% proxy CPU per request over --mtls off",
                f(mtls.proxyCpuUsPerReq(), 1) + " vs " + f(off.proxyCpuUsPerReq(), 1) + " µs/req ("
                        + String.format(Locale.ROOT, "%+.1f%%", cost * 100) + ")", cost <= 0.15));
    }

    private static BenchRow plane(List<BenchRow> rows, String plane) {
        return rows.stream().filter(r -> r.plane().equals(plane)).findFirst().orElse(null);
    }
}
