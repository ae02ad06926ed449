package dev.weft.dataplane.balancing;

import dev.weft.dataplane.resilience.RetryBudget;
import dev.weft.dataplane.resilience.ServicePolicy;
import dev.weft.registry.Endpoint;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The endpoints of one upstream service and admission to them.
 *
 * <p>A request asks for a slot with {@link #acquire}. If an endpoint below its capacity is free the slot is granted
 * at once by the Worker's own {@link Balancer}; otherwise the request waits in a bounded FIFO queue
 * ({@link WaitQueue}) and is granted the next slot that frees ({@link #release}). A full queue, a wait past the queue timeout, or a service without
 * endpoints fail the promise at once with a {@link NoCapacityException} whose message is what the client is told.
 * When every endpoint is down (ejected by outlier detection, or paused after a refused dial) a request fails at once
 * with a {@link NoHealthyEndpointException}, and so do the requests already waiting when the last one goes down:
 * a queue in front of endpoints that take nothing cannot drain, and its callers would only wait for its timeout.
 * A cluster that {@linkplain #shedWhenFull sheds} (the local app's, under its adaptive concurrency limit) has no
 * queue: a request finding every slot taken fails at once with a {@link ShedException}, because a queue in front
 * of an overloaded app only adds waiting to its latency.
 *
 * <p>Threads: {@link #update} runs on the registry's thread; everything else on any Worker. Shared state is the
 * volatile endpoint list, the atomic counters inside {@link EndpointState} and a lock-free deque of waiters.
 */
public final class Cluster {
    private final String service;
    private final Balancer.Factory balancerFactory;
    private final Map<EventExecutor, Balancer> balancers = new ConcurrentHashMap<>();
    private final WaitQueue waiters;
    private final LongAdder rejectedNoEndpoints = new LongAdder();
    private volatile List<EndpointState> endpoints = List.of();
    private volatile boolean known;
    private volatile ClusterProtection protection = new ClusterProtection(ServicePolicy.DEFAULT);
    private final LongAdder rateLimited = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder timeouts = new LongAdder();
    private final LongAdder shed = new LongAdder();
    private volatile boolean shedWhenFull;
    private volatile OutboundLimit outboundLimit = new OutboundLimit(ServicePolicy.DEFAULT.outboundLimit());
    private final LongAdder outboundShed = new LongAdder();
    /** Given to each endpoint: runs on whichever thread saw it go down (see {@link EndpointState#onDown}). */
    private final Runnable endpointDown = this::failWaitersIfAllDown;
    /**
     * Set by the first request after each {@link #idleSinceLastCheck}: a read per request, and a write only once
     * per check period, so Workers on different cores do not pass this line back and forth.
     */
    private volatile boolean used = true;
    /** Sum of the endpoints' registered capacities, 0 if any has none (then unknown); set with the endpoints. */
    private volatile int capacity;

    public Cluster(String service, Balancer.Factory balancerFactory, int maxQueue, Duration queueTimeout) {
        this.service = service;
        this.balancerFactory = balancerFactory;
        this.waiters = new WaitQueue(this, maxQueue, queueTimeout);
    }

    public String service() {
        return service;
    }

    /** Whether the registry has told us anything about this service yet. */
    public boolean isKnown() {
        return known;
    }

    public List<EndpointState> endpoints() {
        return endpoints;
    }

    public int queued() {
        return waiters.size();
    }

    public String balancer() {
        return balancerFactory.name();
    }

    public long rejectedQueueFull() {
        return waiters.rejectedQueueFull();
    }

    public long rejectedTimeout() {
        return waiters.rejectedTimeout();
    }

    /** Requests refused at once because the service had no endpoint, or none up (see the class comment). */
    public long rejectedNoEndpoints() {
        return rejectedNoEndpoints.sum();
    }

    /** Replaces the endpoint set with a registry snapshot, keeping the state (in-flight counts) of endpoints kept. */
    public void update(List<Endpoint> snapshot) {
        Map<String, EndpointState> old = new HashMap<>();
        for (EndpointState s : endpoints) {
            old.put(s.endpoint().id(), s);
        }
        List<EndpointState> next = new ArrayList<>(snapshot.size());
        for (Endpoint e : snapshot) {
            EndpointState s = old.remove(e.id());
            if (s == null) {
                s = new EndpointState(e);
                s.onDown(endpointDown);
            } else {
                s.update(e);
            }
            next.add(s);
        }
        // Requests already at a removed endpoint finish there; it just gets no new ones.
        old.values().forEach(EndpointState::markRemoved);
        int sum = 0;
        for (EndpointState e : next) {
            if (e.capacity() == 0) {
                sum = 0; // a learned limit moves; the outbound limit then stands on its own
                break;
            }
            sum += e.capacity();
        }
        capacity = sum;
        endpoints = List.copyOf(next);
        known = true;
        if (next.isEmpty()) {
            failAllWaiters(new UnknownServiceException(service));
        } else {
            drainWaiters();
        }
    }

    public ServicePolicy policy() {
        return protection.policy();
    }

    /**
     * Applies a new policy; requests in flight finish under the one they started with. The outbound limit is rebuilt
     * (learning starts over) only when its settings change, so a push of other keys keeps what it learned.
     */
    public synchronized void policy(ServicePolicy p) {
        protection = new ClusterProtection(p); // with new per-caller buckets
        if (!p.outboundLimit().equals(outboundLimit.config())) {
            outboundLimit = new OutboundLimit(p.outboundLimit());
        }
    }

    /**
     * The limit on this sidecar's requests in flight to the service (see {@link OutboundLimit}). An exchange takes a
     * place with {@link OutboundLimit#tryAcquire()} on the limit returned here and gives it back to that same object,
     * so a policy change never unbalances a count.
     */
    public OutboundLimit outboundLimit() {
        return outboundLimit;
    }

    /**
     * Takes a place under the outbound limit for one exchange.
     *
     * @return the requests in flight including this one, or -1 when refused (then counted)
     */
    public int tryEnterOutbound(OutboundLimit limit) {
        int n = limit.tryAcquire(capacity());
        if (n < 0) {
            outboundShed.increment();
        }
        return n;
    }

    /** The outbound limit in force now, under the endpoints' capacities; 0 when there is none. */
    public int outboundLimitNow() {
        return outboundLimit.limit(capacity());
    }

    /**
     * What the endpoints can take at once together: the sum of their registered capacities, 0 when unknown (none yet,
     * or an endpoint without one). Computed per endpoint snapshot: it is read once per request.
     */
    private int capacity() {
        return capacity;
    }

    public long outboundShed() {
        return outboundShed.sum();
    }

    public RetryBudget retryBudget() {
        return protection.budget();
    }

    public long rateLimited() {
        return rateLimited.sum();
    }

    public long retries() {
        return retries.sum();
    }

    public void countRetry() {
        retries.increment();
    }

    public void countTimeout() {
        timeouts.increment();
    }

    public long timeouts() {
        return timeouts.sum();
    }

    /**
     * A slot right now from the Worker's balancer, or null; never queues. Call on {@code loop}.
     *
     * @param exclude an endpoint to avoid (a retry's previous one): chosen only when no other endpoint has room
     */
    public EndpointState tryPick(EventExecutor loop, long hash, EndpointState exclude) {
        List<EndpointState> eps = endpoints;
        if (eps.isEmpty()) {
            return null;
        }
        Balancer b = balancers.get(loop);
        if (b == null) { // once per Worker: computeIfAbsent's capturing lambda was an object per request
            b = balancers.computeIfAbsent(loop, l -> balancerFactory.create());
        }
        EndpointState chosen = b.pick(eps, hash, exclude);
        return chosen != null || exclude == null ? chosen : b.pick(eps, hash, null);
    }

    /**
     * Sheds instead of queueing when every slot is taken (see the class comment). Set from the inbound policy's
     * {@code concurrency-limit}; requests already queued still get their turn.
     */
    public void shedWhenFull(boolean on) {
        shedWhenFull = on;
    }

    public boolean shedsWhenFull() {
        return shedWhenFull;
    }

    /** Requests refused at once because every slot was taken and the cluster sheds rather than queues. */
    public long shed() {
        return shed.sum();
    }

    /** The slots of all endpoints together: what a shed request is told the limit was. */
    public int limit() {
        int n = 0;
        for (EndpointState e : endpoints) {
            n += e.effectiveCapacity();
        }
        return n;
    }

    /**
     * Local rate limiting (policy {@code rate-limit}, and {@code per-caller-rate} keyed by the calling service).
     *
     * @return 0 when admitted, else nanoseconds until a request could pass (for Retry-After)
     */
    public long checkRate(String caller, ServicePolicy.Route route) {
        long wait = protection.checkRate(caller, route);
        if (wait != 0) {
            rateLimited.increment();
        }
        return wait;
    }

    /**
     * Outlier detection: records an attempt's outcome at an endpoint and ejects it after the policy's number of
     * failures in a row, unless that would eject more than the policy's share of the service.
     */
    public void recordOutcome(EndpointState e, boolean failed) {
        if (!failed) {
            e.recordSuccess();
            return;
        }
        ServicePolicy.OutlierPolicy op = protection.policy().outlier();
        int streak = e.recordConsecutiveFailure();
        if (op.consecutiveFailures() <= 0 || streak < op.consecutiveFailures() || e.isEjected()) {
            return;
        }
        List<EndpointState> eps = endpoints;
        int ejected = 0;
        for (EndpointState x : eps) {
            if (x.isEjected()) {
                ejected++;
            }
        }
        if ((ejected + 1) * 100 <= op.maxEjectedPercent() * eps.size()) {
            e.eject(op.baseEjection().toNanos(), op.maxEjection().toNanos(), op.consecutiveFailures());
        }
    }

    /** For ring-hash: the request header whose value picks the endpoint; null for other balancers. */
    public String hashHeader() {
        return balancerFactory.hashHeader();
    }

    public Future<EndpointState> acquire(EventExecutor loop) {
        return acquire(loop, 0, null);
    }

    /**
     * The usual admission without a future: a slot now from the Worker's balancer when nobody waits, else null, and
     * then the caller goes through {@link #acquire} (which queues or refuses). A granted slot's promise was an
     * object per request for a result known at once. Call on {@code loop}; arguments as for {@link #acquire}.
     */
    public EndpointState acquireNow(EventExecutor loop, long hash, EndpointState exclude) {
        if (!used) {
            used = true;
        }
        return waiters.isEmpty() && !endpoints.isEmpty() ? tryPick(loop, hash, exclude) : null;
    }

    /**
     * Asks for a slot at some endpoint. Must be called on {@code loop}; the returned future completes on it.
     *
     * @param hash    the request's hash key (see {@link #hashHeader()}), 0 when unused
     * @param exclude the endpoint a retried request just failed at, avoided when another has room; null for none.
     *                A waiter granted a slot later from the queue may still get it: by then it has waited anyway
     */
    public Future<EndpointState> acquire(EventExecutor loop, long hash, EndpointState exclude) {
        if (!used) {
            used = true;
        }
        Promise<EndpointState> promise = loop.newPromise();
        List<EndpointState> eps = endpoints;
        if (eps.isEmpty() && known) {
            rejectedNoEndpoints.increment();
            return promise.setFailure(new UnknownServiceException(service));
        }
        // Waiters go first: a newcomer must not overtake requests already queued. A service the registry has not
        // answered for yet (first request by Host name) also waits here, for its first snapshot.
        boolean mayPick = waiters.isEmpty() && !eps.isEmpty();
        if (mayPick) {
            EndpointState chosen = tryPick(loop, hash, exclude);
            if (chosen != null) {
                return promise.setSuccess(chosen);
            }
        }
        // Only once no slot was found: a down endpoint takes none, and on the usual path this scan (a clock read per
        // endpoint) would be paid for nothing.
        if (allDown(eps)) {
            rejectedNoEndpoints.increment();
            return promise.setFailure(new NoHealthyEndpointException(service, eps.size()));
        }
        if (mayPick && shedWhenFull) {
            shed.increment();
            return promise.setFailure(new ShedException(limit()));
        }
        if (!waiters.enqueue(loop, promise)) {
            return promise; // the queue is full
        }
        // A slot may have freed between the pick and the enqueue; without this the waiter could sleep until timeout.
        // Likewise the registry's first snapshot (update() runs on the registry's thread): if it said "no endpoint"
        // after the check at the top and before this waiter was queued, it found nobody to tell, and the request
        // waited the whole queue timeout to be told "no capacity" instead of "unknown service" (seen once in CI).
        // And the last endpoint may have gone down meanwhile, with nobody queued yet to tell.
        if (known && endpoints.isEmpty()) {
            failAllWaiters(new UnknownServiceException(service));
        } else if (!failWaitersIfAllDown()) {
            drainWaiters();
        }
        return promise;
    }

    /**
     * Whether no request asked for a slot since the previous call and none is in flight or waiting; starts the
     * next period. For the Router's expiry of clusters nobody calls any more.
     */
    public boolean idleSinceLastCheck() {
        boolean wasUsed = used;
        used = false;
        if (wasUsed || waiters.size() > 0 || outboundLimit.inFlight() > 0) {
            return false;
        }
        for (EndpointState e : endpoints) {
            if (e.inFlight() > 0) {
                return false;
            }
        }
        return true;
    }

    /** Gives a slot back and hands freed capacity to the oldest waiter. Any thread. */
    public void release(EndpointState state) {
        state.releaseSlot();
        if (!waiters.isEmpty()) {
            drainWaiters();
        }
    }

    private void drainWaiters() {
        waiters.drain();
    }

    /** Fails every waiter when no endpoint is up; returns whether it did. Any thread. */
    private boolean failWaitersIfAllDown() {
        List<EndpointState> eps = endpoints;
        if (waiters.isEmpty() || !allDown(eps)) {
            return false;
        }
        failAllWaiters(new NoHealthyEndpointException(service, eps.size()));
        return true;
    }

    /** Whether there are endpoints and each is {@linkplain EndpointState#isDown down}. */
    private static boolean allDown(List<EndpointState> eps) {
        for (EndpointState e : eps) {
            if (!e.isDown()) {
                return false;
            }
        }
        return !eps.isEmpty();
    }

    /** @param cause shared by every waiter: it has no stack trace, and its message names the service only */
    private void failAllWaiters(NoCapacityException cause) {
        rejectedNoEndpoints.add(waiters.failAll(cause));
    }

    /** Whether any endpoint has a free slot. Any thread. */
    boolean anyRoom() {
        for (EndpointState s : endpoints) {
            if (s.hasRoom()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Slots freed while requests wait go to the endpoint with the most free room relative to its weight. This runs
     * on whichever thread freed the slot, so it must not use a Worker's balancer state.
     */
    EndpointState pickForWaiter() {
        return LEAST_LOADED.pick(endpoints, 0);
    }

    /** Least-request keeps no state, so one instance serves every thread that frees a slot. */
    private static final Balancer LEAST_LOADED = new LeastRequestBalancer();
}
