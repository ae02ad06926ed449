package dev.weft.dataplane.observe;

import dev.weft.dataplane.metrics.PerThread;
import dev.weft.dataplane.metrics.RouteMetrics;
import dev.weft.dataplane.transport.LoopSpares;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * What one Worker keeps for one sidecar's {@link Observability}, found once per exchange ({@link Observability#start})
 * and then carried by the exchange's record ({@link ObservedExchange#worker}), so that nothing later in the exchange
 * looks up a per-thread cell again.
 *
 * <p>Why: each look-up of a Worker's cell ({@link PerThread#get}) follows four references, and in the mesh bench, nine
 * processes on two cores, those lines are rarely still in a cache: JFR's CPU-time samples put 1.6 µs per request on
 * {@code PerThread.get} alone with observability on, and 0.6 µs more on finding the route's metrics in their maps
 * (docs/benchmarks.md, session 14). Here the Worker's counters and the route's cell it wrote last are one reference
 * away from the record the exchange is writing anyway.
 *
 * <p>It holds:
 * <ul>
 *   <li>the records that nothing reads once their exchange ended (not exported, not logged), begun again by the
 *       Worker's next exchanges: once most requests are not sampled, the exporter gives back only a few percent of
 *       them, and without these every other request would allocate its record (some 170 bytes) again. A record comes
 *       back only after the loop task that ended its exchange has run ({@link LoopSpares}); an exchange calls its
 *       trace only while it is not finished, so after that task nothing reaches the record for its old exchange;</li>
 *   <li>this Worker's cell of {@link Observability}'s counters;</li>
 *   <li>the route metrics cell it recorded into last, with its key: a sidecar's Worker sends most of its exchanges
 *       to the same destination and route, so one entry spares both map look-ups.</li>
 * </ul>
 * A thread that runs no event loop (a test's, a benchmark's) keeps no records; a thread that shares a cell
 * ({@link PerThread#isShared}: a virtual thread) writes through the {@link PerThread}, under its monitor.
 *
 * <p>Thread: one per Worker loop and {@link Observability} (a {@link FastThreadLocal} of the latter); every method
 * runs on that loop. Buffers: none.
 */
final class WorkerCells {
    static final int SLOTS = 64;

    /** The loop this thread runs, or null when it runs none (then no record is kept). */
    private final EventExecutor loop;
    private final LoopSpares<ObservedExchange> spares = new LoopSpares<>(SLOTS);
    private final PerThread<long[]> allCounts;
    /** This thread's own cell of {@code allCounts}, or null when it shares one. */
    private final long[] counts;

    private RouteMetrics.Stats lastStats;
    private long[] lastCell;
    private boolean lastInbound;
    private String lastDestination;
    private String lastRoute;

    /** @param counts Observability's per-Worker counters; this thread's cell is found here, once */
    WorkerCells(EventExecutor loop, PerThread<long[]> counts) {
        this.loop = loop;
        this.allCounts = counts;
        long[] own = counts.get();
        this.counts = counts.isShared(own) ? null : own;
    }

    /** A record to begin again, or null. */
    ObservedExchange take() {
        return spares.take();
    }

    /** {@code x}'s exchange ended and nothing else reads it: a spare once the current task has run. */
    void giveBack(ObservedExchange x) {
        if (loop != null) {
            spares.giveBack(x, loop);
        }
    }

    /** Adds one to counters {@code a} and {@code b}. */
    void increment(int a, int b) {
        if (counts != null) {
            PerThread.add(counts, a, 1);
            PerThread.add(counts, b, 1);
        } else {
            PerThread.increment(allCounts, a, b);
        }
    }

    void count(int counter) {
        if (counts != null) {
            PerThread.add(counts, counter, 1);
        } else {
            PerThread.add(allCounts, counter, 1);
        }
    }

    /** Records {@code x}'s outcome in its route's golden metrics. */
    void record(RouteMetrics metrics, ObservedExchange x) {
        boolean inbound = x.direction == ExchangeObserver.Direction.INBOUND;
        int retries = Math.max(0, x.attempts - 1);
        // Identity is enough: destinations and routes are the clusters' and the route table's own Strings, and a
        // miss only costs the look-up that every exchange made before.
        if (lastCell == null || inbound != lastInbound || x.destination != lastDestination || x.route != lastRoute) {
            RouteMetrics.Stats stats = metrics.stats(inbound, x.destination, x.route);
            long[] cell = stats.ownCell();
            if (cell == null) {
                stats.record(x.status, x.durationMicros(), x.bytesIn, x.bytesOut, retries, x.error);
                return;
            }
            lastStats = stats;
            lastCell = cell;
            lastInbound = inbound;
            lastDestination = x.destination;
            lastRoute = x.route;
        }
        lastStats.recordOwn(lastCell, x.status, x.durationMicros(), x.bytesIn, x.bytesOut, retries, x.error);
    }
}
