package dev.weft.dataplane.lifecycle;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where a sidecar's start goes, for issue 15's "ready in 300 ms": with {@code -Dweft.startup.trace=true} each phase
 * of the start prints one line to stderr, {@code weft startup: +123.4 ms (cpu 98 ms) PHASE}, the time since the
 * process started and the CPU the whole process had used by then (all threads, JIT included, from /proc).
 * docs/benchmarks.md ("issue 15: start-up") reads a start with it. Off, each mark is one read of a final static.
 *
 * <p>The process start comes from {@code /proc/self/stat} (clock ticks since boot, 10 ms) and the clock from
 * {@code /proc/uptime}, both read once at the first mark, so the absolute figures carry up to 10 ms of error; the
 * differences between marks come from {@link System#nanoTime()}.
 *
 * <p>Threads: any; marks from several threads may interleave, each line is printed whole.
 */
public final class StartupTrace {
    private static final boolean ON = Boolean.getBoolean("weft.startup.trace");
    private static final long TICKS_PER_SECOND = 100;
    private static long originNanos;
    private static double msAtOrigin = Double.NaN;

    private StartupTrace() {
    }

    public static boolean on() {
        return ON;
    }

    /** Prints {@code phase} with the time since the process started and the CPU used, when tracing is on. */
    public static void mark(String phase) {
        if (!ON) {
            return;
        }
        long now = System.nanoTime();
        double sinceStart;
        synchronized (StartupTrace.class) {
            if (Double.isNaN(msAtOrigin)) {
                originNanos = now;
                msAtOrigin = msSinceProcessStart();
            }
            sinceStart = msAtOrigin + (now - originNanos) / 1e6;
        }
        System.err.println(String.format(Locale.ROOT, "weft startup: +%.1f ms (cpu %d ms) %s", sinceStart,
                cpuMillis(), phase));
    }

    /** /proc/uptime minus the process's start time (field 22 of /proc/self/stat, clock ticks since boot). */
    private static double msSinceProcessStart() {
        try {
            double uptime = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
            String[] stat = statFields();
            return (uptime - Long.parseLong(stat[19]) / (double) TICKS_PER_SECOND) * 1000;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** utime + stime of the whole process (fields 14 and 15). */
    private static long cpuMillis() {
        try {
            String[] stat = statFields();
            return (Long.parseLong(stat[11]) + Long.parseLong(stat[12])) * 1000 / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The fields after the command name, which may hold spaces: index 0 is field 3 (the state). */
    private static String[] statFields() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }
}
