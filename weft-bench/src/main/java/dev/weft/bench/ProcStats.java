package dev.weft.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * What Linux's {@code /proc} says about processes and the machine: CPU time of a process tree, its peak resident
 * memory, the whole machine's busy time and load average. Read, never written; the bench reads these at both edges
 * of a measured window and reports the difference.
 *
 * <p>A proxy may be several processes (nginx: a master and its workers), so process figures cover the process and
 * all its live descendants. A descendant that exits inside the window takes its CPU time with it; none of the
 * proxies measured here replaces its workers while it runs.
 */
final class ProcStats {
    /** {@code USER_HZ}: the unit of the tick counts in /proc. 100 on every Linux this runs on (getconf CLK_TCK). */
    static final long TICKS_PER_SECOND = 100;
    private static final Path PROC = Path.of("/proc");

    private ProcStats() {}

    /** Whether /proc is there to read (Linux); elsewhere every figure is reported as unknown. */
    static boolean available() {
        return Files.isReadable(PROC.resolve("stat"));
    }

    /** The process and its live descendants, at the moment of the call. */
    static List<Long> tree(long pid) {
        List<Long> pids = new ArrayList<>();
        ProcessHandle.of(pid).ifPresent(root -> {
            pids.add(root.pid());
            root.descendants().forEach(d -> pids.add(d.pid()));
        });
        return pids;
    }

    /** User plus system CPU time, in nanoseconds, of the process and its live descendants; 0 if it is gone. */
    static long treeCpuNanos(long pid) {
        long ticks = 0;
        for (long p : tree(pid)) {
            ticks += cpuTicks(p).orElse(0);
        }
        return ticks * (1_000_000_000L / TICKS_PER_SECOND);
    }

    /**
     * User plus system CPU time, in nanoseconds, of the JIT compiler threads (HotSpot's {@code C1 CompilerThread}
     * and {@code C2 CompilerThread}) of the process and its live descendants; 0 for a process with none (nginx,
     * HAProxy). A JVM keeps compiling for a minute or more after its first load on a busy 2-core machine, and that
     * CPU is a one-time cost of the process, not a cost per request: the bench reports it on its own.
     */
    static long treeJitCpuNanos(long pid) {
        long ticks = 0;
        for (long p : tree(pid)) {
            ticks += jitTicks(p);
        }
        return ticks * (1_000_000_000L / TICKS_PER_SECOND);
    }

    private static long jitTicks(long pid) {
        Path tasks = PROC.resolve(Long.toString(pid)).resolve("task");
        long ticks = 0;
        try (var threads = Files.newDirectoryStream(tasks)) {
            for (Path thread : threads) {
                String stat = read(thread.resolve("stat"));
                if (stat != null && isJitThread(stat)) {
                    ticks += parseCpuTicks(stat).orElse(0);
                }
            }
        } catch (IOException | RuntimeException gone) {
            // The process exited between the listing and the read.
        }
        return ticks;
    }

    /** Whether a thread's stat line names a HotSpot compiler thread ({@code (C2 CompilerThre)}: comm is cut at 15). */
    static boolean isJitThread(String stat) {
        int open = stat.indexOf('(');
        return open >= 0 && (stat.startsWith("C1 CompilerThre", open + 1) || stat.startsWith("C2 CompilerThre", open + 1));
    }

    /**
     * utime + stime of one process (all its threads, live and exited), from {@code /proc/PID/stat}. The command
     * name in field 2 may hold spaces and parentheses, so fields are counted from the last ')'.
     */
    static OptionalLong cpuTicks(long pid) {
        String stat = read(PROC.resolve(Long.toString(pid)).resolve("stat"));
        if (stat == null) {
            return OptionalLong.empty();
        }
        return parseCpuTicks(stat);
    }

    static OptionalLong parseCpuTicks(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return OptionalLong.empty();
        }
        // After ") " come field 3 (state) onwards; utime and stime are fields 14 and 15.
        String[] fields = stat.substring(close + 2).trim().split("\\s+");
        if (fields.length < 13) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
    }

    /**
     * cutime + cstime of a process: the CPU of its children that exited and that it waited for, from its
     * {@code /proc/PID/stat} (fields 16 and 17). A shell that ran a program and read its own stat afterwards reports
     * that program's whole CPU time, which nobody can read once the program has exited.
     */
    static OptionalLong parseChildrenCpuTicks(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return OptionalLong.empty();
        }
        String[] fields = stat.substring(close + 2).trim().split("\\s+");
        if (fields.length < 15) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Long.parseLong(fields[13]) + Long.parseLong(fields[14]));
    }

    /**
     * Peak resident set size ({@code VmHWM}) in bytes, summed over the process and its live descendants: for a
     * multi-process proxy this counts pages the processes share once per process, so it errs on the high side.
     */
    static long treePeakRssBytes(long pid) {
        long total = 0;
        for (long p : tree(pid)) {
            total += peakRssBytes(p).orElse(0);
        }
        return total;
    }

    /** Resident set size now ({@code VmRSS}) in bytes. */
    static OptionalLong rssBytes(long pid) {
        return statusBytes(pid, "VmRSS");
    }

    static OptionalLong peakRssBytes(long pid) {
        return statusBytes(pid, "VmHWM");
    }

    /** Threads of the process now ({@code Threads} in /proc/PID/status). */
    static OptionalLong threads(long pid) {
        String status = read(PROC.resolve(Long.toString(pid)).resolve("status"));
        return status == null ? OptionalLong.empty() : parseStatusNumber(status, "Threads");
    }

    /** Open file descriptors of the process now (entries of /proc/PID/fd); empty when it is gone. */
    static OptionalLong openFds(long pid) {
        try (var fds = Files.list(PROC.resolve(Long.toString(pid)).resolve("fd"))) {
            return OptionalLong.of(fds.count());
        } catch (IOException | RuntimeException gone) {
            return OptionalLong.empty();
        }
    }

    private static OptionalLong statusBytes(long pid, String field) {
        String status = read(PROC.resolve(Long.toString(pid)).resolve("status"));
        return status == null ? OptionalLong.empty() : parseStatusKilobytes(status, field);
    }

    static OptionalLong parseStatusKilobytes(String status, String field) {
        OptionalLong kb = parseStatusNumber(status, field);
        return kb.isPresent() ? OptionalLong.of(kb.getAsLong() * 1024) : kb;
    }

    /** The first number on a /proc/PID/status line ({@code Threads:  27} gives 27), as written. */
    static OptionalLong parseStatusNumber(String status, String field) {
        for (String line : status.split("\n")) {
            if (line.startsWith(field + ":")) {
                String[] parts = line.substring(field.length() + 1).trim().split("\\s+");
                return OptionalLong.of(Long.parseLong(parts[0]));
            }
        }
        return OptionalLong.empty();
    }

    /** The machine's CPU time so far, all cores: busy and total ticks from the first line of /proc/stat. */
    record MachineCpu(long busyTicks, long totalTicks) {
        static final MachineCpu UNKNOWN = new MachineCpu(0, 0);

        /** Busy share of all cores between {@code earlier} and this sample (0..1); NaN when unknown. */
        double busySince(MachineCpu earlier) {
            long total = totalTicks - earlier.totalTicks;
            return total <= 0 ? Double.NaN : (double) (busyTicks - earlier.busyTicks) / total;
        }
    }

    static MachineCpu machineCpu() {
        String stat = read(PROC.resolve("stat"));
        return stat == null ? MachineCpu.UNKNOWN : parseMachineCpu(stat);
    }

    /** {@code cpu user nice system idle iowait irq softirq steal ...}: idle and iowait are the not-busy part. */
    static MachineCpu parseMachineCpu(String stat) {
        String first = stat.lines().findFirst().orElse("");
        if (!first.startsWith("cpu ")) {
            return MachineCpu.UNKNOWN;
        }
        String[] f = first.substring(4).trim().split("\\s+");
        long total = 0;
        // guest and guest_nice (fields 9, 10) are already inside user and nice.
        for (int i = 0; i < Math.min(8, f.length); i++) {
            total += Long.parseLong(f[i]);
        }
        long idle = Long.parseLong(f[3]) + (f.length > 4 ? Long.parseLong(f[4]) : 0);
        return new MachineCpu(total - idle, total);
    }

    /** The 1-minute load average, NaN when unknown. */
    static double loadAverage() {
        String loadavg = read(PROC.resolve("loadavg"));
        if (loadavg == null) {
            return Double.NaN;
        }
        return Double.parseDouble(loadavg.trim().split("\\s+")[0]);
    }

    /** One line for the report: CPU model, cores, memory, kernel. */
    static String machineDescription() {
        String model = "unknown CPU";
        String cpuinfo = read(PROC.resolve("cpuinfo"));
        if (cpuinfo != null) {
            model = cpuinfo.lines().filter(l -> l.startsWith("model name")).findFirst()
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse(model);
        }
        String memory = "";
        String meminfo = read(PROC.resolve("meminfo"));
        if (meminfo != null) {
            OptionalLong total = parseStatusKilobytes(meminfo, "MemTotal");
            if (total.isPresent()) {
                memory = String.format(Locale.ROOT, ", %.1f GiB memory", total.getAsLong() / (double) (1L << 30));
            }
        }
        return model + ", " + Runtime.getRuntime().availableProcessors() + " cores" + memory + ", Linux "
                + System.getProperty("os.version");
    }

    private static String read(Path path) {
        try {
            return Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException gone) {
            // The process exited, or this is not Linux.
            return null;
        }
    }
}
