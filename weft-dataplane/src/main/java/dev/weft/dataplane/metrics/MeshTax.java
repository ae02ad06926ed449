package dev.weft.dataplane.metrics;

import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * The mesh's own cost: CPU time and heap allocated per request handled, per hop (each sidecar a request crosses is
 * one hop, so a request through two sidecars is counted once by each).
 *
 * <p>Measured in aggregate, not per request: per-thread CPU and allocation counters of this sidecar's event-loop
 * threads (read from the JVM, one system call per thread) and of the whole process, sampled once a second. A
 * per-request clock read would cost more than most of what it measures, and event loops interleave requests, so
 * a per-request figure could not be attributed honestly anyway. The ratio over the last {@value #WINDOW_SECONDS}
 * seconds is exported as a gauge; the counters let Prometheus compute any other window.
 *
 * <p>Two scopes: {@code event_loops} (this sidecar's Manager and Workers: the data path) and {@code process} (the
 * whole JVM, including GC, JIT, registry and exporter threads: the true cost of a dedicated sidecar process; when
 * several sidecars share a JVM, as in tests, it is theirs together).
 *
 * <p>Threads: {@link #sample} on the observability scheduler; {@link #render} on an admin request's Worker.
 * Sample history is guarded by this object's monitor (two short critical sections a second).
 */
public final class MeshTax {
    public static final int WINDOW_SECONDS = 10;

    private final com.sun.management.ThreadMXBean threads;
    private final com.sun.management.OperatingSystemMXBean os;
    private final LongSupplier hops;
    private volatile long[] threadIds = new long[0];
    private final Sample[] ring = new Sample[WINDOW_SECONDS + 1];
    private int next;
    private int filled;

    private record Sample(long loopCpuNanos, long loopAllocated, long processCpuNanos, long processAllocated,
                          long hops) {}

    /** @param hops requests this sidecar finished, inbound and outbound */
    public MeshTax(LongSupplier hops) {
        this.threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        this.os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        this.hops = hops;
        if (threads.isThreadCpuTimeSupported() && !threads.isThreadCpuTimeEnabled()) {
            threads.setThreadCpuTimeEnabled(true);
        }
        if (threads.isThreadAllocatedMemorySupported() && !threads.isThreadAllocatedMemoryEnabled()) {
            threads.setThreadAllocatedMemoryEnabled(true);
        }
    }

    /** The threads whose cost is the sidecar's data path. */
    public void setEventLoopThreads(long[] ids) {
        threadIds = ids.clone();
    }

    public int eventLoopThreads() {
        return threadIds.length;
    }

    private Sample now() {
        long[] ids = threadIds;
        long cpu = 0;
        long alloc = 0;
        if (ids.length > 0) {
            for (long c : threads.getThreadCpuTime(ids)) {
                cpu += Math.max(0, c);
            }
            for (long a : threads.getThreadAllocatedBytes(ids)) {
                alloc += Math.max(0, a);
            }
        }
        return new Sample(cpu, alloc, Math.max(0, os.getProcessCpuTime()),
                Math.max(0, threads.getTotalThreadAllocatedBytes()), hops.getAsLong());
    }

    /** Once a second. */
    public void sample() {
        Sample s = now();
        synchronized (this) {
            ring[next] = s;
            next = (next + 1) % ring.length;
            filled = Math.min(filled + 1, ring.length);
        }
    }

    /** Oldest and newest samples of the window, or null before two samples exist. */
    private synchronized Sample[] window() {
        if (filled < 2) {
            return null;
        }
        Sample newest = ring[(next - 1 + ring.length) % ring.length];
        Sample oldest = ring[filled < ring.length ? 0 : next];
        return new Sample[]{oldest, newest};
    }

    public void render(PrometheusText p) {
        Sample s = now();
        p.counter("weft_mesh_cpu_seconds_total", "CPU time spent, by scope (event_loops: this sidecar's Manager"
                + " and Workers; process: the whole JVM).", s.loopCpuNanos / 1e9, "scope", "event_loops");
        p.counter("weft_mesh_cpu_seconds_total", "", s.processCpuNanos / 1e9, "scope", "process");
        p.counter("weft_mesh_heap_allocated_bytes_total", "Heap bytes allocated, by scope.", s.loopAllocated,
                "scope", "event_loops");
        p.counter("weft_mesh_heap_allocated_bytes_total", "", s.processAllocated, "scope", "process");
        p.counter("weft_mesh_hops_total", "Requests this sidecar finished (inbound + outbound): one hop each.", s.hops);
        Sample[] w = window();
        if (w != null && w[1].hops > w[0].hops) {
            double n = w[1].hops - w[0].hops;
            p.gauge("weft_mesh_tax_cpu_microseconds_per_request", "CPU microseconds this sidecar spent per request"
                    + " it handled, over the last " + WINDOW_SECONDS + " s.",
                    (w[1].loopCpuNanos - w[0].loopCpuNanos) / 1000.0 / n, "scope", "event_loops");
            p.gauge("weft_mesh_tax_cpu_microseconds_per_request", "",
                    (w[1].processCpuNanos - w[0].processCpuNanos) / 1000.0 / n, "scope", "process");
            p.gauge("weft_mesh_tax_heap_bytes_per_request", "Heap bytes allocated per request handled, over the last "
                    + WINDOW_SECONDS + " s.", (w[1].loopAllocated - w[0].loopAllocated) / n, "scope", "event_loops");
            p.gauge("weft_mesh_tax_heap_bytes_per_request", "",
                    (w[1].processAllocated - w[0].processAllocated) / n, "scope", "process");
        }
    }
}
