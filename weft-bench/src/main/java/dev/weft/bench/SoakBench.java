package dev.weft.bench;

import dev.weft.control.cli.PromText;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Issue 15's "no drift": the paper's topology under a moderate, steady load for a long time, and the four things a
 * leak shows in first, read from every Weft sidecar at a fixed interval: resident memory, the heap after a full
 * collection (the live set), open file descriptors and threads. A figure drifts when the median of the run's last
 * quarter is above the median of its first quarter (after the warm-up) by more than its {@link Figure#limit}.
 *
 * <p>Before each reading the soak asks the sidecar's JVM for a full collection ({@code jcmd PID GC.run}): with the
 * Serial collector the heap after a young collection also holds whatever was promoted since the last full one, which
 * grows and falls without any leak. The pause this costs each sidecar once per interval is a few milliseconds.
 *
 * <p>Thread: the command's thread runs the load; one scheduler thread takes the readings.
 */
final class SoakBench {
    /** What is read from each sidecar, and how much growth counts as drift over one run. */
    enum Figure {
        RSS("resident memory", "MiB", 8 << 20, Reading::rss),
        HEAP("heap after full GC", "MiB", 4 << 20, Reading::heapAfterGc),
        FDS("open file descriptors", "", 4, Reading::fds),
        THREADS("threads", "", 2, Reading::threads);

        final String label;
        final String unit;
        /** 8 MiB is issue 15's tolerance for "flat" as the mesh grows; the counts allow a pool's slack. */
        final long limit;
        final ToLongFunction<Reading> value;

        Figure(String label, String unit, long limit, ToLongFunction<Reading> value) {
            this.label = label;
            this.unit = unit;
            this.limit = limit;
            this.value = value;
        }

        String format(double v) {
            return unit.equals("MiB") ? String.format(Locale.ROOT, "%.1f MiB", v / (1 << 20))
                    : String.format(Locale.ROOT, "%.0f", v);
        }
    }

    /** One sidecar at one moment; -1 for a figure that could not be read. */
    record Reading(double seconds, String sidecar, long rss, long heapAfterGc, long fds, long threads) {
        String csv() {
            return String.format(Locale.ROOT, "%.1f,%s,%d,%d,%d,%d", seconds, sidecar, rss, heapAfterGc, fds, threads);
        }
    }

    /**
     * A figure of one sidecar over the run: the medians of its first and last quarters after the warm-up; with fewer
     * than {@link #JUDGED} readings after the warm-up there is no verdict.
     */
    record Drift(String sidecar, Figure figure, int readings, double early, double late) {
        static final int JUDGED = 4;

        boolean judged() {
            return readings >= JUDGED;
        }

        boolean drifts() {
            return judged() && late - early > figure.limit;
        }
    }

    record Settings(int connections, Duration duration, Duration interval, Duration warmup) {}

    private SoakBench() {}

    /**
     * Loads the running topology for the settings' duration and reads every Weft sidecar each interval.
     *
     * @return the readings, in time order
     */
    static List<Reading> run(Experiment experiment, Settings settings, String javaHome)
            throws InterruptedException {
        List<DataPlane.Proxy> sidecars = experiment.proxies().stream().filter(p -> p.admin() > 0).toList();
        List<Reading> readings = Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        ScheduledExecutorService reader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "weft-soak-reader");
            t.setDaemon(true);
            return t;
        });
        try (HttpProbe http = new HttpProbe()) {
            reader.scheduleWithFixedDelay(() -> {
                // One round: every sidecar collects at once (a jcmd each, in parallel: one takes about half a second
                // to start), then each is read.
                fullGc(sidecars, javaHome);
                double seconds = (System.nanoTime() - start) / 1e9;
                List<Reading> round = new ArrayList<>();
                for (DataPlane.Proxy s : sidecars) {
                    round.add(read(s, seconds, http));
                }
                // A round cut short by the end of the load is not a reading (its sidecars may be stopping).
                if (!Thread.currentThread().isInterrupted()) {
                    readings.addAll(round);
                }
            }, 0, settings.interval().toMillis(), TimeUnit.MILLISECONDS);
            experiment.load(settings.connections(), Duration.ZERO, settings.duration(),
                    new LoadGenerator.PhaseListener() {});
        } finally {
            reader.shutdownNow();
            reader.awaitTermination(30, TimeUnit.SECONDS);
        }
        synchronized (readings) {
            return List.copyOf(readings);
        }
    }

    private static Reading read(DataPlane.Proxy sidecar, double seconds, HttpProbe http) {
        long heap = -1;
        try {
            String metrics = http.get(URI.create("http://" + Experiment.LOOPBACK + ":" + sidecar.admin()
                    + "/metrics"), Duration.ofSeconds(10)).body();
            for (PromText.Sample s : PromText.parse(metrics)) {
                if (s.name().equals("jvm_memory_heap_after_gc_bytes")) {
                    heap = (long) s.value();
                }
            }
        } catch (IOException e) {
            // No reading this time: the chart shows a gap rather than a zero.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new Reading(seconds, sidecar.name(), ProcStats.rssBytes(sidecar.pid()).orElse(-1), heap,
                ProcStats.openFds(sidecar.pid()).orElse(-1), ProcStats.threads(sidecar.pid()).orElse(-1));
    }

    /** {@code jcmd PID GC.run} for every sidecar, in parallel and bounded: the readings after it are live sets. */
    private static void fullGc(List<DataPlane.Proxy> sidecars, String javaHome) {
        List<Process> started = new ArrayList<>();
        try {
            for (DataPlane.Proxy s : sidecars) {
                started.add(new ProcessBuilder(Path.of(javaHome, "bin", "jcmd").toString(), Long.toString(s.pid()),
                        "GC.run").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
            }
            for (Process jcmd : started) {
                if (!jcmd.waitFor(20, TimeUnit.SECONDS)) {
                    jcmd.destroyForcibly();
                }
            }
        } catch (IOException e) {
            // No jcmd: the heap figure is then after the last collection of any kind (see the class comment).
        } catch (InterruptedException e) {
            started.forEach(Process::destroyForcibly);
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Every figure of every sidecar: the medians of the first and last quarter of its readings taken after
     * {@code warmup}; with fewer than 4 such readings the figure is listed without a verdict (a round of readings
     * can take 10 s on a busy machine, so a short soak may not have four).
     */
    static List<Drift> drifts(List<Reading> readings, Duration warmup) {
        List<Drift> out = new ArrayList<>();
        List<String> names = readings.stream().map(Reading::sidecar).distinct().toList();
        for (String name : names) {
            for (Figure f : Figure.values()) {
                double[] v = readings.stream()
                        .filter(r -> r.sidecar().equals(name) && r.seconds() >= warmup.toSeconds())
                        .mapToLong(f.value).filter(x -> x >= 0).asDoubleStream().toArray();
                if (v.length >= Drift.JUDGED) {
                    int q = v.length / 4;
                    out.add(new Drift(name, f, v.length, median(v, 0, q), median(v, v.length - q, v.length)));
                } else {
                    out.add(new Drift(name, f, v.length, Double.NaN, Double.NaN));
                }
            }
        }
        return out;
    }

    private static double median(double[] v, int from, int to) {
        double[] part = java.util.Arrays.copyOfRange(v, from, to);
        java.util.Arrays.sort(part);
        int n = part.length;
        return n % 2 == 1 ? part[n / 2] : (part[n / 2 - 1] + part[n / 2]) / 2;
    }

    /** The run as markdown: the verdict, a row per sidecar and figure, and where the chart and CSV are. */
    static String report(List<Drift> drifts, Settings settings, String when, String machine) {
        StringBuilder md = new StringBuilder();
        long drifting = drifts.stream().filter(Drift::drifts).count();
        md.append("# Soak: ").append(when).append("\n\n");
        md.append(String.format(Locale.ROOT, "%d connections for %s (the paper's topology, tracing and metrics on), "
                        + "every Weft sidecar read every %d s, the first %d s left out as warm-up. %s.%n%n",
                settings.connections(), dev.weft.registry.support.Durations.format(settings.duration()),
                settings.interval().toSeconds(), settings.warmup().toSeconds(), machine));
        long unjudged = drifts.stream().filter(d -> !d.judged()).count();
        md.append(drifting > 0 ? "**Drift in " + drifting + " figure(s):** see the rows marked below.\n\n"
                : unjudged == 0 ? "**No drift:** every figure of every sidecar stayed within its limit.\n\n"
                : unjudged == drifts.size() ? "**No verdict:** too few readings after the warm-up (" + Drift.JUDGED
                        + " needed per figure); soak longer.\n\n"
                : "**No drift** in the figures judged; " + unjudged + " had too few readings for a verdict.\n\n");
        md.append("| sidecar | figure | first quarter (median) | last quarter (median) | change | limit | drift |\n");
        md.append("|---|---|---:|---:|---:|---:|---|\n");
        for (Drift d : drifts) {
            if (!d.judged()) {
                md.append("| ").append(d.sidecar()).append(" | ").append(d.figure().label).append(" | – | – | – | ")
                        .append(d.figure().format(d.figure().limit)).append(" | no verdict (").append(d.readings())
                        .append(" readings, ").append(Drift.JUDGED).append(" needed) |\n");
                continue;
            }
            double change = d.late() - d.early();
            md.append("| ").append(d.sidecar()).append(" | ").append(d.figure().label).append(" | ")
                    .append(d.figure().format(d.early())).append(" | ").append(d.figure().format(d.late()))
                    .append(" | ").append(change >= 0 ? "+" : "−").append(d.figure().format(Math.abs(change)))
                    .append(" | ").append(d.figure().format(d.figure().limit)).append(" | ")
                    .append(d.drifts() ? "**yes**" : "no").append(" |\n");
        }
        md.append("\nEvery reading: `soak.csv`; the chart: `soak.svg`.\n");
        return md.toString();
    }

    static String csv(List<Reading> readings) {
        StringBuilder sb = new StringBuilder("seconds,sidecar,rss_bytes,heap_after_full_gc_bytes,open_fds,threads\n");
        readings.forEach(r -> sb.append(r.csv()).append('\n'));
        return sb.toString();
    }
}
