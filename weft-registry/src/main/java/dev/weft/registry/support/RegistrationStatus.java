package dev.weft.registry.support;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Whether a registration is believed registered, and whether it was stopped; what every backend's
 * {@link dev.weft.registry.Registration} reports and waits on. Thread safe: set on the registry's event thread, read
 * and awaited on any thread.
 *
 * <p>Once stopped, a late "registered" (an answer that lands after close) is ignored, so a closed registration never
 * looks alive again.
 */
public final class RegistrationStatus {
    private boolean registered;
    private boolean stopped;

    public synchronized boolean isRegistered() {
        return registered;
    }

    public synchronized boolean isStopped() {
        return stopped;
    }

    /** Records the outcome of a step; wakes {@link #await} callers. */
    public synchronized void set(boolean value) {
        if (value && stopped) {
            return;
        }
        registered = value;
        notifyAll();
    }

    /** No further step may mark it registered. */
    public synchronized void stop() {
        stopped = true;
    }

    /** Waits until registered or the timeout passes; returns whether it is registered. */
    public synchronized boolean await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!registered) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }
}
