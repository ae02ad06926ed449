package dev.weft.dataplane.balancing;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The requests of one {@link Cluster} waiting for a slot, in arrival order: bounded ({@code --queue-size}), each for at
 * most the queue timeout ({@code --queue-timeout}), served as slots free. Only a request that found no free slot
 * comes here; the usual admission ({@link Cluster#acquireNow}) only asks whether anyone waits. What the cluster
 * decides (which endpoint, whether all are down) stays the cluster's; this is the waiting.
 *
 * <p>Threads: any Worker queues (on its own loop, where its promise completes); any thread that frees a slot drains.
 * A slot found for a waiter of another loop is handed over on that loop ({@link #grant}): a promise completed from a
 * foreign thread reads done at once but runs its listeners later, in a task on its loop, so the exchange's next step
 * (which goes on at once when its step is done) could run before the exchange had learned its endpoint, and the
 * request was lost (seen at two Workers: the provider side held it until the client gave up, docs/benchmarks.md
 * session 27). Shared state is a lock-free deque and an atomic count.
 */
final class WaitQueue {
    private final Cluster cluster;
    private final int maxQueue;
    private final Duration queueTimeout;
    private final ConcurrentLinkedDeque<Waiter> waiters = new ConcurrentLinkedDeque<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final LongAdder rejectedQueueFull = new LongAdder();
    private final LongAdder rejectedTimeout = new LongAdder();

    WaitQueue(Cluster cluster, int maxQueue, Duration queueTimeout) {
        this.cluster = cluster;
        this.maxQueue = maxQueue;
        this.queueTimeout = queueTimeout;
    }

    boolean isEmpty() {
        return waiters.isEmpty();
    }

    int size() {
        return queued.get();
    }

    long rejectedQueueFull() {
        return rejectedQueueFull.sum();
    }

    long rejectedTimeout() {
        return rejectedTimeout.sum();
    }

    /**
     * Queues {@code promise} until a slot frees or the queue timeout passes; a full queue fails it at once. Call on
     * {@code loop}, the promise's. The caller then checks once more for a slot freed meanwhile ({@link #drain}).
     *
     * @return false when the queue was full (the promise has failed)
     */
    boolean enqueue(EventExecutor loop, Promise<EndpointState> promise) {
        if (queued.incrementAndGet() > maxQueue) {
            queued.decrementAndGet();
            rejectedQueueFull.increment();
            promise.setFailure(new NoCapacityException("service '" + cluster.service() + "' is at capacity and"
                    + " its queue is full (" + maxQueue + " waiting)"));
            return false;
        }
        Waiter waiter = new Waiter(loop, promise);
        waiters.addLast(waiter);
        ScheduledFuture<?> timeout = loop.schedule(() -> {
            if (promise.isDone()) {
                return; // served (or cancelled) just before the timer ran
            }
            if (promise.tryFailure(cluster.isKnown() ? new NoCapacityException("no capacity at service '"
                    + cluster.service() + "' within " + queueTimeout.toMillis() + " ms")
                    : new UnknownServiceException(cluster.service()))) {
                queued.decrementAndGet();
                rejectedTimeout.increment();
                waiters.remove(waiter);
            }
        }, queueTimeout.toMillis(), TimeUnit.MILLISECONDS);
        // A waiter that is served must not leave its timer behind: under sustained queueing that is one live task
        // (and, before this, one exception) per request for the whole queue timeout.
        promise.addListener(f -> timeout.cancel(false));
        return true;
    }

    /** Hands free slots to the oldest waiters, as long as there are both. Any thread. */
    void drain() {
        Waiter w;
        while ((w = waiters.pollFirst()) != null) {
            if (w.promise().isDone()) {
                continue; // timed out or cancelled; it already left the count
            }
            EndpointState s = cluster.pickForWaiter();
            if (s == null) {
                waiters.addFirst(w);
                // A release on another thread may have run between our failed pick and the addFirst; re-check once.
                if (cluster.anyRoom()) {
                    continue;
                }
                return;
            }
            if (w.loop().inEventLoop()) {
                grant(w, s);
            } else {
                Waiter waiter = w;
                try {
                    w.loop().execute(() -> grant(waiter, s)); // see the class comment: completed on its own loop
                } catch (RejectedExecutionException stopping) {
                    s.releaseSlot(); // its loop is shutting down: nobody will take the slot there
                }
            }
        }
    }

    /** Completes a waiter with slot {@code s}, on the waiter's loop; a waiter that timed out meanwhile passes it on. */
    private void grant(Waiter w, EndpointState s) {
        if (w.promise().isDone()) {
            cluster.release(s); // timed out meanwhile (on this loop too): offered to the next waiter
            return;
        }
        queued.decrementAndGet(); // before the promise completes, so its listeners see the count without it
        if (!w.promise().trySuccess(s)) {
            cluster.release(s);
        }
    }

    /**
     * Fails every waiter with {@code cause}. Any thread.
     *
     * @return how many were failed (the cluster counts them as refused for want of endpoints)
     */
    int failAll(NoCapacityException cause) {
        int failed = 0;
        Waiter w;
        while ((w = waiters.pollFirst()) != null) {
            if (w.promise().tryFailure(cause)) {
                queued.decrementAndGet();
                failed++;
            }
        }
        return failed;
    }

    /** A queued request: its promise and the loop it completes on (the timeout removes its own: one per promise). */
    private record Waiter(EventExecutor loop, Promise<EndpointState> promise) {
    }
}
