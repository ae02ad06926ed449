package dev.weft.registry.support;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A registry client's one event thread. Every backend confines its state (registrations, watches, backoffs) to a
 * single thread, so none of it needs a lock; this is that thread, shared by the backends so that they start, run
 * and stop it alike.
 *
 * <p>Once {@link #shutdown} has begun, work handed to it is dropped without an exception: completions of calls still
 * in flight arrive on other threads (gRPC's, Netty's), and a rejection there would surface in a thread that cannot
 * handle it. Queued work checks its owner's closed flag instead.
 */
public final class EventThread implements Executor {
    private final ScheduledThreadPoolExecutor pool;
    private volatile Thread thread;

    /** @param name the thread's name, e.g. {@code weft-registry-127.0.0.1:7070} */
    public EventThread(String name) {
        pool = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);   // a registry client never keeps a process alive by itself
            thread = t;
            return t;
        });
        pool.setRemoveOnCancelPolicy(true);   // cancelled heartbeats and retries must not pile up in the queue
        pool.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Runs {@code task} on the event thread; dropped silently once shut down. Any thread. */
    @Override
    public void execute(Runnable task) {
        try {
            pool.execute(task);
        } catch (RejectedExecutionException e) {
            // Shut down: nothing is supposed to happen any more.
        }
    }

    /** Runs {@code task} after {@code delay} and hands its future to {@code timer} (to cancel it); not once shut down. */
    public void schedule(Runnable task, Duration delay, Consumer<ScheduledFuture<?>> timer) {
        try {
            timer.accept(pool.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException e) {
            // Shut down.
        }
    }

    /** Runs {@code task} every {@code period}, the first time after {@code initialDelay}, until shut down. */
    public void every(Runnable task, Duration initialDelay, Duration period) {
        pool.scheduleWithFixedDelay(task, initialDelay.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Stops taking work and waits up to a second for what is queued, then interrupts it. Called on the event thread
     * itself (a listener closing its registry), it does not wait: that would be waiting for itself, and the queued
     * tasks find their owner closed.
     */
    public void shutdown() {
        pool.shutdown();
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            if (!pool.awaitTermination(1, TimeUnit.SECONDS)) {
                pool.shutdownNow();
            }
        } catch (InterruptedException e) {
            pool.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
