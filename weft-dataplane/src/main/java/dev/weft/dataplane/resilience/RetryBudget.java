package dev.weft.dataplane.resilience;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Limits retries to a share of real traffic, as Finagle's RetryBudget does: each request deposits
 * {@code ratio} of a retry, a small floor of retries per second is always granted, and a retry withdraws one whole
 * token. During an outage every first attempt fails, but retries can add at most {@code ratio} of the load, so
 * retries never multiply the load on a struggling service.
 *
 * <p>Threads: any Worker; the balance is one atomic (in thousandths of a retry), no lock.
 */
public final class RetryBudget {
    private static final long ONE = 1000;

    private final long depositPerRequest;
    private final long floorPerSecond;
    private final long cap;
    /** Starts with a second of the floor: a new budget (a new sidecar, a policy just pushed) can retry at once. */
    private final AtomicLong balance;
    private final AtomicLong lastFloorNanos = new AtomicLong(System.nanoTime());
    private final LongAdder exhausted = new LongAdder();

    public RetryBudget(double ratio, double minPerSecond) {
        this.depositPerRequest = Math.round(ratio * ONE);
        this.floorPerSecond = Math.round(minPerSecond * ONE);
        // Saving up is bounded: a long quiet period must not fund a retry storm later.
        this.cap = Math.max(ONE * 10, Math.round(minPerSecond * ONE * 10));
        this.balance = new AtomicLong(Math.min(cap, floorPerSecond));
    }

    /** A first attempt was sent: it funds {@code ratio} of a retry. */
    public void deposit() {
        add(depositPerRequest);
    }

    /** Takes one retry from the budget; false (and counted) when the budget is spent. */
    public boolean tryWithdraw() {
        refillFloor();
        while (true) {
            long b = balance.get();
            if (b < ONE) {
                exhausted.increment();
                return false;
            }
            if (balance.compareAndSet(b, b - ONE)) {
                return true;
            }
        }
    }

    public long exhausted() {
        return exhausted.sum();
    }

    public double balance() {
        return balance.get() / (double) ONE;
    }

    private void refillFloor() {
        long now = System.nanoTime();
        long last = lastFloorNanos.get();
        long elapsed = now - last;
        if (elapsed >= 100_000_000L && lastFloorNanos.compareAndSet(last, now)) {
            add(floorPerSecond * elapsed / 1_000_000_000L);
        }
    }

    private void add(long milli) {
        while (true) {
            long b = balance.get();
            long next = Math.min(cap, b + milli);
            if (next == b || balance.compareAndSet(b, next)) {
                return;
            }
        }
    }
}
