package dev.weft.dataplane.balancing;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import dev.weft.registry.Endpoint;

import java.util.concurrent.atomic.AtomicBoolean;
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
    /** {@link Endpoint#address()} of {@link #endpoint}, kept with it. */
    private volatile String address;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final AtomicInteger ejections = new AtomicInteger();
    private final LongAdder ejectionsTotal = new LongAdder();
    /** Until when (System.nanoTime) outlier detection keeps the endpoint out; 0 when admitted. */
    private volatile long ejectedUntil;
    /** See {@link #onProbation}: set by an ejection or a refused dial, cleared by an answer below 500. */
    private volatile boolean probation;
    /** While on probation: whether the one probe is out. */
    private final AtomicBoolean probing = new AtomicBoolean();
    /** Until when (System.nanoTime) the endpoint is skipped because dialling it failed; 0 when reachable. */
    private volatile long unreachableUntil;
    /** Dials refused since the last one that connected; sets the next pause. */
    private volatile int refusedInARow;
    /** Told when this endpoint stops taking requests (ejected, or unreachable): its cluster, set once. */
    private volatile Runnable onDown;

    /** Time constant of the latency average: how fast an endpoint's past stops counting (Finagle uses 10 s too). */
    private static final double DECAY_NANOS = 10e9;

    private volatile double ewmaNanos;
    private volatile long ewmaStamp;
    /**
     * Learned concurrency limit: the gradient algorithm of Netflix's concurrency-limits library raises the limit while
     * latency stays at its no-load level and cuts it when queueing shows. Used for endpoints that registered no
     * capacity (capacity 0), so an endpoint is never sent more than it can take even when nobody said how much that
     * is; and, when {@link #limitAdaptively} was called, below the registered capacity too (the inbound side's limit
     * protecting the local app). Replaced whole by a policy change, so it is volatile.
     */
    private volatile Limit adaptive;
    /** Whether {@link #adaptive} also applies when a capacity is registered (then as a limit under it). */
    private volatile boolean adaptiveUnderCapacity;

    public EndpointState(Endpoint endpoint) {
        this.endpoint = endpoint;
        this.address = endpoint.address();
        this.adaptive = gradient2(20, 4, 1000);
    }

    /** The limit algorithm: Gradient2 with the library's defaults besides the bounds. */
    private static Limit gradient2(int initial, int min, int max) {
        return gradient2Builder(initial, min, max).build();
    }

    /** The one place Gradient2 is configured, shared with {@link OutboundLimit}, which smooths it further. */
    static Gradient2Limit.Builder gradient2Builder(int initial, int min, int max) {
        return Gradient2Limit.newBuilder().initialLimit(initial).minLimit(min).maxConcurrency(max);
    }

    /**
     * Limits this endpoint adaptively even though it registered a capacity: at most {@code max}, at least {@code min},
     * starting at {@code initial}. Learned state starts over, so call it only when these numbers change.
     */
    public void limitAdaptively(int initial, int min, int max) {
        adaptive = gradient2(initial, min, max);
        adaptiveUnderCapacity = true;
    }

    /** Back to the registered capacity alone (or the default learned limit when none is registered). */
    public void limitByCapacityOnly() {
        if (adaptiveUnderCapacity) {
            adaptiveUnderCapacity = false;
            adaptive = gradient2(20, 4, 1000);
        }
    }

    /** The learned limit (also when it is not in force: see {@link #effectiveCapacity()}). */
    public int adaptiveLimit() {
        return adaptive.getLimit();
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    /** The endpoint's "host:port", built once: every admitted request reports it to its trace. */
    public String address() {
        return address;
    }

    void update(Endpoint e) {
        this.endpoint = e;
        this.address = e.address();
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

    /**
     * The most requests this endpoint may have in flight: its registered capacity, else the learned limit; the
     * smaller of the two when the endpoint is limited adaptively under its capacity.
     */
    public int effectiveCapacity() {
        int cap = endpoint.capacity();
        if (cap == 0) {
            return adaptive.getLimit();
        }
        return adaptiveUnderCapacity ? Math.min(cap, adaptive.getLimit()) : cap;
    }

    public boolean hasRoom() {
        if (isDown() || probation && probing.get()) {
            return false;
        }
        int cap = effectiveCapacity();
        return cap == 0 || inFlight.get() < cap;
    }

    /**
     * Whether the endpoint is on probation: back from an ejection or a pause after refused dials, it takes one
     * request at a time until one is answered below 500. Without it, every Worker saw an idle endpoint the moment the
     * ejection ended and sent it a burst (a dozen requests to a dead instance in the kill scenario), all of which
     * failed before the first failure could eject it again.
     */
    public boolean onProbation() {
        return probation;
    }

    /**
     * A dial to this endpoint failed (refused, timed out): skip it for a second, then 2, 4 and 8 s while dials keep
     * failing. The registry removes a dead instance only when its lease expires (10 s by default), and until then
     * every request sent there would fail; after each pause one request probes it again. Nothing was sent on a
     * failed dial, so that request is retried elsewhere. Any thread; a lost update only changes one pause.
     */
    public void markUnreachable() {
        probation = true;
        int n = refusedInARow;
        refusedInARow = Math.min(n + 1, MAX_UNREACHABLE_DOUBLINGS);
        unreachableUntil = System.nanoTime() + (UNREACHABLE_PAUSE_NANOS << n);
        wentDown();
    }

    public void markReachable() {
        if (unreachableUntil != 0) {
            unreachableUntil = 0;
        }
        if (refusedInARow != 0) {
            refusedInARow = 0;
        }
    }

    public boolean isUnreachable() {
        long until = unreachableUntil;
        return until != 0 && System.nanoTime() < until;
    }

    private static final long UNREACHABLE_PAUSE_NANOS = 1_000_000_000L;
    /** The pause doubles at most this many times: 1, 2, 4, then 8 s. */
    private static final int MAX_UNREACHABLE_DOUBLINGS = 3;

    /** Takes a slot if the endpoint is below its capacity. Lock free: a CAS loop on the shared counter. */
    public boolean tryAcquire() {
        if (isDown()) {
            return false;
        }
        if (probation) {
            // One probe at a time, whatever the capacity; released in releaseSlot, decided by recordSuccess.
            if (!probing.compareAndSet(false, true)) {
                return false;
            }
            inFlight.incrementAndGet();
            requests.increment();
            return true;
        }
        int cap = effectiveCapacity();
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
        // Any slot's release ends the probe: a request admitted before the ejection may free it early, which only
        // lets one more probe through, whereas a probe cancelled before its answer must never keep the gate shut.
        if (probation) {
            probing.set(false);
        }
    }

    public void recordFailure() {
        failures.increment();
    }

    /** An answer below 500 arrived: the failure streak ends. Written only when there was a streak (hot path). */
    public void recordSuccess() {
        if (consecutiveFailures.get() != 0) {
            consecutiveFailures.set(0);
        }
        if (probation) {
            probation = false;
        }
    }

    /** One more failure in a row (5xx, reset, refused dial); returns the length of the streak. */
    public int recordConsecutiveFailure() {
        failures.increment();
        return consecutiveFailures.incrementAndGet();
    }

    /**
     * Takes the endpoint out of rotation for {@code base × 2^(n-1)} (n = how often it was ejected, capped): each
     * relapse keeps it out longer. When the time is up it is readmitted with a streak one short of the threshold, so
     * the first request that probes it decides: success readmits it fully, failure ejects it again, for longer.
     */
    public void eject(long baseNanos, long maxNanos, int threshold) {
        int n = ejections.incrementAndGet();
        long time = Math.min(maxNanos, baseNanos << Math.min(20, n - 1));
        probation = true;
        ejectedUntil = System.nanoTime() + time;
        consecutiveFailures.set(Math.max(0, threshold - 1));
        ejectionsTotal.increment();
        wentDown();
    }

    /**
     * Whether the endpoint takes no request now, whatever its load: removed, ejected, or paused after a refused dial
     * (both pauses end on their own, and the next request then probes it).
     */
    public boolean isDown() {
        return removed || isUnreachable() || isEjected();
    }

    /** Who is told when the endpoint goes down ({@link Cluster}: so that requests waiting for it fail at once). */
    void onDown(Runnable r) {
        onDown = r;
    }

    private void wentDown() {
        Runnable r = onDown;
        if (r != null) {
            r.run();
        }
    }

    public boolean isEjected() {
        long until = ejectedUntil;
        return until != 0 && System.nanoTime() < until;
    }

    public long ejectionsTotal() {
        return ejectionsTotal.sum();
    }

    /**
     * Records one answer's latency (request sent → answer head). Peak-EWMA: a sample above the average replaces it at
     * once (a slowing endpoint is avoided immediately), lower samples pull it down gradually. Racy updates between
     * Workers lose at most a sample, which an average tolerates; no lock on the hot path.
     */
    public void recordLatency(long rttNanos, int inFlightAtStart, boolean dropped) {
        long now = System.nanoTime();
        double prev = ewmaNanos;
        if (prev == 0 || rttNanos > prev) {
            ewmaNanos = rttNanos;
        } else {
            double w = Math.exp(-(now - ewmaStamp) / DECAY_NANOS);
            ewmaNanos = prev * w + rttNanos * (1 - w);
        }
        ewmaStamp = now;
        if (endpoint.capacity() == 0 || adaptiveUnderCapacity) {
            adaptive.onSample(now - rttNanos, rttNanos, inFlightAtStart, dropped);
        }
    }

    /** Expected cost of sending one more request here: latency × (outstanding + 1) / weight. */
    public double cost() {
        double latency = ewmaNanos;
        if (latency == 0) {
            latency = 1e6; // unknown yet: assume 1 ms so new endpoints get traffic and a measurement
        }
        return latency * (inFlight.get() + 1) / endpoint.weight();
    }

    public double latencyEwmaMillis() {
        return ewmaNanos / 1e6;
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
        return endpoint.id() + "@" + address;
    }
}
