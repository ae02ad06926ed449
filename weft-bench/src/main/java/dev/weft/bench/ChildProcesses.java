package dev.weft.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every process the experiment started, so that all of them are stopped exactly once: at the end of the run, on
 * a startup failure, or from the shutdown hook on Ctrl-C. Thread-safe: the hook runs on its own thread, possibly
 * while the main thread is still starting processes; one started after the stop is stopped at once.
 */
final class ChildProcesses {
    private final List<ChildProcess> started = new ArrayList<>();
    private boolean stopped;

    void add(ChildProcess child) {
        boolean stopNow;
        synchronized (this) {
            stopNow = stopped;
            if (!stopNow) {
                started.add(child);
            }
        }
        if (stopNow) {
            stopQuietly(child, Duration.ZERO);
        }
    }

    /**
     * Sends SIGTERM to all, newest first (the consumer side stops sending before the providers go), then waits up
     * to {@code grace} in total before killing what is left.
     */
    void stopAll(Duration grace) {
        List<ChildProcess> toStop;
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            toStop = new ArrayList<>(started.reversed());
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (ChildProcess child : toStop) {
            child.terminate();
        }
        for (ChildProcess child : toStop) {
            stopQuietly(child, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
    }

    private static void stopQuietly(ChildProcess child, Duration grace) {
        try {
            child.stop(grace);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            child.kill();
        }
    }
}
