package dev.weft.dataplane.balancing;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.WindowedLimit;
import dev.weft.dataplane.resilience.ServicePolicy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The limit on requests in flight from this sidecar to one destination service, learned from the latency this
 * sidecar itself sees (request read → answer head), in the manner of Envoy's adaptive concurrency filter. It sits in
 * front of the {@link Cluster}'s capacity slots and queue: under overload the excess is answered 503
 * {@code outbound-limit} at once at the first hop, where refusing costs least, instead of waiting in the queue, the
 * peers' sockets and the run queues of a saturated machine.
 *
 * <p>Why here and not only at the providers: on a CPU-bound host the providers' slots never fill (the machine
 * saturates first), so their inbound limit sees no queue while requests wait everywhere else; only the caller's
 * sidecar sees the whole wait of its requests.
 *
 * <p>The algorithm is the one {@link EndpointState} learns endpoint limits with (Gradient2, Netflix
 * concurrency-limits), fed one sample per window rather than per request ({@link WindowedLimit}, the library's own
 * smoothing: the window's average latency, at most ten updates a second), and with a tolerance of 2: the limit is
 * cut only while the latency is above twice its long-term level, so the ordinary jitter of a busy two-core machine
 * does not shed. It is never above the endpoints' capacities together, and by default never below them either
 * ({@link #DEFAULT_MIN}): then it sheds exactly what would otherwise queue, and the latency cuts deeper only under a
 * policy {@code min}. Off ({@code adaptive: false}), it only counts.
 *
 * <p>Threads: any Worker; the count is an atomic, the limit's own updates are locked inside the library (a tryLock
 * once per window). Replaced whole when its policy changes.
 */
public final class OutboundLimit {
    /**
     * Where the learned limit starts and what it cannot exceed unless the policy says. In force it is also never above
     * the service's endpoints' capacities together (see {@link #tryAcquire}), so with the default capacities of 200
     * it starts at what the endpoints can take, and beyond that a request is refused rather than queued.
     */
    public static final int DEFAULT_MAX = 1000;
    /**
     * The floor when the policy sets none and the endpoints' capacities are unknown (some registered none). When they
     * are known, the floor by default is their sum: the limit then sheds only what would otherwise wait in the
     * queue, and latency cuts nothing. Measured on a saturated two-core machine, cuts below that also refused a
     * 512-connection load the providers could take (docs/resilience.md), so cutting deeper takes a policy {@code min}.
     */
    public static final int DEFAULT_MIN = 200;

    private final ServicePolicy.ConcurrencyLimit config;
    private final Limit limit;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Whether the endpoints' capacities were known at the last admission (then, by default, nothing is learned). */
    private volatile boolean capacityKnown;

    public OutboundLimit(ServicePolicy.ConcurrencyLimit config) {
        this.config = config;
        if (config.adaptive()) {
            int max = config.max() > 0 ? config.max() : Math.max(DEFAULT_MAX, config.min());
            // Without a policy min the floor depends on the endpoints (see limit()), so Gradient2 itself has none.
            int min = config.min() > 0 ? Math.min(config.min(), max) : 1;
            int initial = config.initial() > 0 ? Math.max(min, Math.min(config.initial(), max)) : max;
            Gradient2Limit gradient = EndpointState.gradient2Builder(initial, min, max).rttTolerance(2.0).build();
            this.limit = WindowedLimit.newBuilder()
                    .minWindowTime(100, TimeUnit.MILLISECONDS)
                    .maxWindowTime(1, TimeUnit.SECONDS)
                    .windowSize(10)
                    .build(gradient);
        } else {
            this.limit = null;
        }
    }

    /** The policy this limit was built from: a policy push that keeps it keeps what was learned. */
    public ServicePolicy.ConcurrencyLimit config() {
        return config;
    }

    public boolean adaptive() {
        return limit != null;
    }

    /**
     * Takes a place if below the limit (always when not adaptive). Lock free.
     *
     * @param capacity the service's endpoints' capacities together, 0 when unknown or unlimited: the limit is never
     *                 above it, so beyond what the endpoints can take at once a request is refused rather than queued
     * @return the requests in flight including this one (the sample's in-flight), or -1 when refused
     */
    public int tryAcquire(int capacity) {
        Limit l = limit;
        if (l == null) {
            return inFlight.incrementAndGet();
        }
        int max = inForce(l, capacity);
        while (true) {
            int n = inFlight.get();
            if (n >= max) {
                return -1;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
                return n + 1;
            }
        }
    }

    /**
     * Gives the place back. {@code latencyNanos} is the exchange's latency as this sidecar saw it, or a negative
     * number when it ended without an answer worth learning from (the client left, our own 503), which is not
     * a sample.
     */
    public void release(long latencyNanos, int inFlightAtStart, boolean dropped) {
        inFlight.decrementAndGet();
        Limit l = limit;
        // Without a policy min the floor is the capacities, so what is learned could never bind when they are known:
        // no sample then, which keeps the default's cost per request to two atomic operations.
        if (l != null && latencyNanos >= 0 && (config.min() > 0 || !capacityKnown)) {
            l.onSample(System.nanoTime() - latencyNanos, latencyNanos, inFlightAtStart, dropped);
        }
    }

    /** The limit in force given the endpoints' {@code capacity} (see {@link #tryAcquire}); 0 when not adaptive. */
    public int limit(int capacity) {
        Limit l = limit;
        return l == null ? 0 : inForce(l, capacity);
    }

    /** The learned limit, not below the floor (the policy's min, else the capacities, else 200), nor above them. */
    private int inForce(Limit l, int capacity) {
        boolean known = capacity > 0;
        if (capacityKnown != known) {
            capacityKnown = known; // written only on a change: read on every request
        }
        int floor = config.min() > 0 ? config.min() : capacity > 0 ? capacity : DEFAULT_MIN;
        int n = Math.max(l.getLimit(), floor);
        return capacity > 0 ? Math.min(n, capacity) : n;
    }

    public int inFlight() {
        return inFlight.get();
    }
}
