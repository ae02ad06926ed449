package dev.weft.registry.support;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Where a sidecar's start goes, for issue 15's "ready in 300 ms": with {@code -Dweft.startup.trace=true} each phase
 * of the start prints one line to stderr, {@code weft startup: +123.4 ms (cpu 98 ms) PHASE}, the time since the
 * process started and the CPU the whole process had used by then (all threads, JIT included, from /proc).
 * docs/benchmarks.md ("issue 15: start-up") reads a start with it. Off, each mark is one read of a final static
 * (and, for the form with parts, the array of its arguments).
 *
 * <p>The process start comes from {@code /proc/self/stat} (clock ticks since boot, 10 ms) and the clock from
 * {@code /proc/uptime}, both read once at the first mark, so the absolute figures carry up to 10 ms of error; the
 * differences between marks come from {@link System#nanoTime()}.
 *
 * <p>The trace ends with {@link #markWithThreads} (the sidecar calls it once ready): marks after it print nothing, so
 * that code on every call's path (the control plane client's connects and answers) marks only the start.
 *
 * <p>Threads: any; marks from several threads may interleave, each line is printed whole.
 */
public final class StartupTrace {
    private static final boolean ON = Boolean.getBoolean("weft.startup.trace");
    private static final long TICKS_PER_SECOND = 100;
    private static long originNanos;
    private static double msAtOrigin = Double.NaN;
    private static volatile boolean ended;

    private StartupTrace() {
    }

    public static boolean on() {
        return ON;
    }

    /** Prints {@code phase} with the time since the process started and the CPU used, when tracing is on. */
    public static void mark(String phase) {
        if (!ON || ended) {
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

    /** {@link #mark} with {@code parts} joined by spaces, joined only when tracing is on. */
    public static void mark(Object... parts) {
        if (ON && !ended) {
            mark(Arrays.stream(parts).map(String::valueOf).collect(Collectors.joining(" ")));
        }
    }

    /**
     * Like {@link #mark}, followed by one line with the CPU each group of threads had used by then, largest first
     * ({@code weft startup: threads: java 420 ms, C2 CompilerThre 380 ms, ...}): threads are grouped by their name
     * without its trailing numbers ({@code /proc/self/task/TID/stat}, names cut at 15 characters by Linux), so the
     * main thread is {@code java}, the JIT {@code C1 CompilerThre} and {@code C2 CompilerThre}, and a pool's threads
     * one group. Threads that have ended are not
     * counted (their CPU is in the process's total of the mark).
     */
    public static void markWithThreads(String phase) {
        if (!ON || ended) {
            return;
        }
        mark(phase);
        ended = true;
        Map<String, Long> ticks = new TreeMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
                            .replaceAll("[-0-9]+$", "").strip();
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks.merge(name, Long.parseLong(f[11]) + Long.parseLong(f[12]), Long::sum);
                } catch (IOException | RuntimeException gone) {
                    // The thread ended between the listing and the read.
                }
            }
        } catch (IOException e) {
            return;
        }
        StringBuilder line = new StringBuilder("weft startup: threads:");
        ticks.entrySet().stream().filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> line.append(' ').append(e.getKey()).append(' ')
                        .append(e.getValue() * 1000 / TICKS_PER_SECOND).append(" ms,"));
        System.err.println(line.substring(0, line.length() - 1));
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
