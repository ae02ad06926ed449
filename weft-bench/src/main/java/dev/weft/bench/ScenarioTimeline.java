package dev.weft.bench;

import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The seconds of one resilience scenario's load, split in phases of equal length after the warm-up, and how a
 * scenario is run: the load on the scenario's thread, its actions ({@link Script}) on a driver thread at the start of
 * their phases ({@link #run}).
 *
 * <p>Threads: the load generator's thread adds the ticks; the driver thread marks the actions; the scenario's thread
 * reads the result once {@link #run} returned.
 */
final class ScenarioTimeline {

    /** Acts at the start of phase {@code n} (0-based) of a scenario; the action runs on the driver thread. */
    interface At {
        void accept(int phase, Action action);
    }

    interface Action {
        void run() throws InterruptedException;
    }

    /** When each phase ends, for actions that last a phase. */
    interface Clock {
        long endOfPhase(int phase);
    }

    /** What a scenario does to the topology, and when. */
    interface Script {
        void plan(At at, Clock clock);
    }

    private final List<LoadGenerator.Tick> ticks = new CopyOnWriteArrayList<>();
    private final Map<Integer, Long> marks = new ConcurrentHashMap<>();
    private volatile long start;
    private volatile long phaseNanos;
    private volatile int phases;
    private LoadResult result;
    private String meshErrors = "";

    /**
     * Runs the load for {@code phases} phases after the warm-up, and the script's actions at their phases' starts
     * (in phase order, each after the previous returned). The load keeps running throughout.
     */
    static ScenarioTimeline run(Experiment experiment, int connections, Duration warmup, Duration phase, int phases,
                                Script script) throws InterruptedException {
        ScenarioTimeline timeline = new ScenarioTimeline();
        List<Map.Entry<Integer, Action>> actions = new ArrayList<>();
        AtomicReference<long[]> starts = new AtomicReference<>();
        Clock clock = n -> starts.get()[0] + (n + 1) * phase.toNanos();
        script.plan((n, a) -> actions.add(Map.entry(n, a)), clock);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread driver = Thread.ofPlatform().name("scenario-driver").unstarted(() -> {
            try {
                while (starts.get() == null) {
                    TimeUnit.MILLISECONDS.sleep(5);
                }
                for (Map.Entry<Integer, Action> a : actions) {
                    long at = starts.get()[0] + a.getKey() * phase.toNanos();
                    sleepUntil(at);
                    timeline.mark(a.getKey(), System.nanoTime());
                    a.getValue().run();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                failure.set(e);
            }
        });
        driver.start();
        LoadResult result = experiment.load(connections, warmup, phase.multipliedBy(phases),
                new LoadGenerator.PhaseListener() {
                    @Override
                    public void measurementStarting() {
                        long now = System.nanoTime();
                        timeline.start(now, phase.toNanos(), phases);
                        starts.set(new long[] {now});
                    }

                    @Override
                    public void second(LoadGenerator.Tick tick) {
                        timeline.add(tick);
                    }
                });
        driver.join(TimeUnit.SECONDS.toMillis(30));
        if (driver.isAlive()) {
            driver.interrupt();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("scenario action failed: " + failure.get().getMessage(), failure.get());
        }
        timeline.result = result;
        return timeline;
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    void start(long nanoTime, long phaseNanos, int phases) {
        this.start = nanoTime;
        this.phaseNanos = phaseNanos;
        this.phases = phases;
    }

    void add(LoadGenerator.Tick tick) {
        ticks.add(tick);
    }

    void mark(int phase, long nanoTime) {
        marks.put(phase, nanoTime);
    }

    /** The whole load's result. */
    LoadResult result() {
        return result;
    }

    /** Answers the sidecars made themselves during the scenario, by kind; empty until set. */
    String meshErrors() {
        return meshErrors;
    }

    void meshErrors(String byKind) {
        meshErrors = byKind;
    }

    /** The ticks whose interval ended inside phase {@code n}, merged. */
    Window phase(int n) {
        long from = start + n * phaseNanos;
        long to = from + phaseNanos;
        Histogram h = new Histogram(LoadStats.MAX_MICROS, 2);
        long ok = 0;
        long errors = 0;
        double seconds = 0;
        for (LoadGenerator.Tick t : ticks) {
            long middle = t.endNanos() - (long) (t.seconds() * 5e8);
            if (middle >= from && middle < to) {
                ok += t.ok();
                errors += t.errors();
                seconds += t.seconds();
                h.add(t.latencyMicros());
            }
        }
        return new Window(ok, errors, seconds, h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e3);
    }

    /**
     * Seconds from the start of phase {@code n} to the start of the first second after which every second of
     * that phase has a p99 at or under {@code threshold}; NaN when it never settles.
     */
    double recoverySeconds(int n, double threshold) {
        long from = start + n * phaseNanos;
        long to = from + phaseNanos;
        long settled = -1;
        for (LoadGenerator.Tick t : ticks) {
            long middle = t.endNanos() - (long) (t.seconds() * 5e8);
            if (middle < from || middle >= to) {
                continue;
            }
            if (t.p99Millis() > threshold) {
                settled = -1;
            } else if (settled < 0) {
                settled = t.endNanos() - (long) (t.seconds() * 1e9);
            }
        }
        return settled < 0 ? Double.NaN : Math.max(0, (settled - from) / 1e9);
    }

    /** One line a second from the measured start: offset, ok/s, errors/s, p50, p99. */
    String render() {
        StringBuilder sb = new StringBuilder(" t(s)   ok/s  err/s   p50ms   p99ms\n");
        for (LoadGenerator.Tick t : ticks) {
            if (t.endNanos() <= start) {
                continue;
            }
            double at = (t.endNanos() - start) / 1e9;
            String mark = "";
            for (Map.Entry<Integer, Long> m : marks.entrySet()) {
                long ms = m.getValue();
                if (ms > t.endNanos() - t.seconds() * 1e9 && ms <= t.endNanos()) {
                    mark = "   <- phase " + (m.getKey() + 1) + " action";
                }
            }
            sb.append(String.format(Locale.ROOT, "%5.1f %6.0f %6.0f %7.1f %7.1f%s%n", at, t.ok() / t.seconds(),
                    t.errors() / t.seconds(), t.p50Millis(), t.p99Millis(), mark));
        }
        return sb.toString();
    }

    /**
     * @param ok      successes in the window
     * @param errors  failures in the window
     * @param seconds its length
     * @param p99     p99 latency of its successes, ms
     */
    record Window(long ok, long errors, double seconds, double p99) {
        double goodput() {
            return seconds == 0 ? Double.NaN : ok / seconds;
        }
    }
}
