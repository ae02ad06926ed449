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
 * does not shed. Off ({@code adaptive: false}), it only counts.
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
     * The learned limit never falls below this: a floor under which even a normal load would be refused (the bench's
     * steady load keeps 128 requests in flight).
     */
    public static final int DEFAULT_MIN = 200;

    private final ServicePolicy.ConcurrencyLimit config;
    private final Limit limit;
    private final AtomicInteger inFlight = new AtomicInteger();

    public OutboundLimit(ServicePolicy.ConcurrencyLimit config) {
        this.config = config;
        if (config.adaptive()) {
            int max = config.max() > 0 ? config.max() : Math.max(DEFAULT_MAX, config.min());
            int min = Math.min(config.min() > 0 ? config.min() : DEFAULT_MIN, max);
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
        int max = capacity > 0 ? Math.min(capacity, l.getLimit()) : l.getLimit();
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
        if (l != null && latencyNanos >= 0) {
            l.onSample(System.nanoTime() - latencyNanos, latencyNanos, inFlightAtStart, dropped);
        }
    }

    /** The limit in force given the endpoints' {@code capacity} (see {@link #tryAcquire}); 0 when not adaptive. */
    public int limit(int capacity) {
        Limit l = limit;
        if (l == null) {
            return 0;
        }
        return capacity > 0 ? Math.min(capacity, l.getLimit()) : l.getLimit();
    }

    public int inFlight() {
        return inFlight.get();
    }
}
