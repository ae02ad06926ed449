package dev.weft.dataplane.metrics;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The sidecar process's own resources at /metrics, under the names Prometheus's Java client gives them, so that
 * existing dashboards and alerts read them unchanged: resident memory, open file descriptors and live threads; and
 * the heap right after the last collection ({@code jvm_memory_heap_after_gc_bytes}), where the heap's current use
 * also counts garbage not yet collected. These four are what a leak shows in first; the soak ({@code ./weft bench
 * soak}) charts them over time (issue 15: "no drift").
 *
 * <p>Thread: the admin server's, at each scrape; reads /proc and the JVM's management beans, nothing on the data path.
 */
public final class ProcessMetrics {
    private static final Path SELF = Path.of("/proc/self");

    private ProcessMetrics() {}

    public static void render(PrometheusText p) {
        long rss = residentBytes();
        if (rss >= 0) {
            p.gauge("process_resident_memory_bytes", "Resident memory of the sidecar process (VmRSS).", rss);
        }
        long fds = openFds();
        if (fds >= 0) {
            p.gauge("process_open_fds", "Open file descriptors of the sidecar process.", fds);
        }
        p.gauge("jvm_threads_current", "Live threads of the sidecar's JVM.",
                ManagementFactory.getThreadMXBean().getThreadCount());
        long afterGc = heapAfterLastGc();
        if (afterGc >= 0) {
            p.gauge("jvm_memory_heap_after_gc_bytes",
                    "Heap used right after the last collection, young or full: the live data and what was promoted.",
                    afterGc);
        }
    }

    /**
     * The heap's use after the most recent collection of any collector (HotSpot's {@code GcInfo}); -1 before the
     * first. With the Serial collector a young collection leaves the survivor space and the old generation, so this
     * also counts what was promoted since the last full collection: a leak check forces a full one first.
     */
    static long heapAfterLastGc() {
        Set<String> heapPools = new HashSet<>();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                heapPools.add(pool.getName());
            }
        }
        com.sun.management.GcInfo latest = null;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof com.sun.management.GarbageCollectorMXBean hotspot) {
                com.sun.management.GcInfo info = hotspot.getLastGcInfo();
                if (info != null && (latest == null || info.getEndTime() > latest.getEndTime())) {
                    latest = info;
                }
            }
        }
        if (latest == null) {
            return -1;
        }
        long used = 0;
        for (Map.Entry<String, MemoryUsage> e : latest.getMemoryUsageAfterGc().entrySet()) {
            used += heapPools.contains(e.getKey()) ? e.getValue().getUsed() : 0;
        }
        return used;
    }

    /** VmRSS from /proc/self/status, in bytes; -1 where there is no /proc. */
    static long residentBytes() {
        try {
            for (String line : Files.readAllLines(SELF.resolve("status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.substring(6).replace("kB", "").strip()) * 1024;
                }
            }
        } catch (IOException | RuntimeException noProc) {
            // Not Linux, or /proc hidden: the gauge is left out rather than reported as 0.
        }
        return -1;
    }

    /** Entries of /proc/self/fd (the listing's own descriptor included, as client_java counts it); -1 without /proc. */
    static long openFds() {
        try (Stream<Path> fds = Files.list(SELF.resolve("fd"))) {
            return fds.count();
        } catch (IOException | RuntimeException noProc) {
            return -1;
        }
    }
}
