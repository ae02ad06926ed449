package dev.weft.dataplane.balancing;

import dev.weft.registry.Endpoint;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the balancer knows about one endpoint of a cluster. Shared by all Workers, so the in-flight count is an
 * atomic: {@link #tryAcquire()} is the single place where a request takes one of the endpoint's capacity slots,
 * which is how the consumer-side sidecar never has more requests in flight at an endpoint than its capacity.
 * The object survives registry updates that keep the endpoint, so counts are not lost on a refresh.
 */
public final class EndpointState {
    private volatile Endpoint endpoint;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final LongAdder requests = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private volatile boolean removed;
    /** Until when (System.nanoTime) the endpoint is skipped because dialling it failed; 0 when reachable. */
    private volatile long unreachableUntil;

    public EndpointState(Endpoint endpoint) {
        this.endpoint = endpoint;
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    void update(Endpoint e) {
        this.endpoint = e;
    }

    public int weight() {
        return endpoint.weight();
    }

    /** 0 means unlimited. */
    public int capacity() {
        return endpoint.capacity();
    }

    public int inFlight() {
        return inFlight.get();
    }

    public boolean hasRoom() {
        int cap = endpoint.capacity();
        return !removed && !isUnreachable() && (cap == 0 || inFlight.get() < cap);
    }

    /**
     * A dial to this endpoint failed (refused, timed out): skip it for a second. The registry removes a dead
     * instance only when its lease expires, and until then every request sent there would fail; after the pause
     * one request probes it again. Nothing was sent on a failed dial, so the request itself is retried elsewhere.
     */
    public void markUnreachable() {
        unreachableUntil = System.nanoTime() + UNREACHABLE_PAUSE_NANOS;
    }

    public void markReachable() {
        if (unreachableUntil != 0) {
            unreachableUntil = 0;
        }
    }

    public boolean isUnreachable() {
        long until = unreachableUntil;
        return until != 0 && System.nanoTime() < until;
    }

    private static final long UNREACHABLE_PAUSE_NANOS = 1_000_000_000L;

    /** Takes a slot if the endpoint is below its capacity. Lock free: a CAS loop on the shared counter. */
    public boolean tryAcquire() {
        if (removed || isUnreachable()) {
            return false;
        }
        int cap = endpoint.capacity();
        while (true) {
            int n = inFlight.get();
            if (cap != 0 && n >= cap) {
                return false;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
                requests.increment();
                return true;
            }
        }
    }

    void releaseSlot() {
        inFlight.decrementAndGet();
    }

    public void recordFailure() {
        failures.increment();
    }

    public long requests() {
        return requests.sum();
    }

    public long failures() {
        return failures.sum();
    }

    void markRemoved() {
        removed = true;
    }

    public boolean isRemoved() {
        return removed;
    }

    @Override
    public String toString() {
        return endpoint.id() + "@" + endpoint.address();
    }
}
