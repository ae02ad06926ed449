package dev.weft.dataplane.observe;

import dev.weft.dataplane.metrics.PerThread;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Which exchanges become spans, at a bounded cost whatever the traffic: the field's answer (AWS X-Ray's reservoir
 * plus a fixed rate, Jaeger's rate-limiting sampler; Istio samples 1 %). A sidecar that traced every request spent
 * about a fifth of its CPU on observability at saturation, most of it on spans and on the control plane's intake of
 * them (docs/benchmarks.md, session 9); traffic well below the reservoir is still traced whole, as before.
 *
 * <ul>
 *   <li><b>A new trace</b> (no decision arrived): sampled while the reservoir has a token (up to {@code perSecond}
 *   a second, one second's worth at once), then with probability {@code ratio}.</li>
 *   <li><b>A mesh peer's decision</b> (the inbound side: it arrived over the mesh link from a sidecar that made or
 *   carried it) is honoured either way, so a trace is whole or absent across sidecars. A sampled one is remembered
 *   ({@link #CONTINUED} recent trace ids), because the app carries it on to this sidecar's outbound side.</li>
 *   <li><b>A decision from outside</b> (the app's or a client's {@code traceparent}/B3 on the outbound side): a
 *   "no" is honoured (it costs nothing); a "yes" is honoured when it continues a trace this sidecar took in sampled
 *   (above: the app passing the mesh's context on), else only while the reservoir has a token, and beyond it is
 *   decided like a new trace. A header from outside must never steer Weft's own costs without limit.</li>
 *   <li><b>An exchange that fails</b> (5xx, an {@code x-weft-error}, a reset) but was not sampled is exported alone,
 *   marked so ({@link #ERROR}), up to {@code perSecond} a second in a reservoir of its own: failures stay visible,
 *   and a storm of them (a shedding sidecar refuses thousands a second) cannot cost without limit either.</li>
 * </ul>
 *
 * <p>The reservoirs are GCRA token buckets (one "theoretical arrival time" each): taking a token is one
 * compare-and-set, and an empty bucket is found with one read and nothing written, so at saturation the Workers
 * share a cache line written {@code perSecond} times a second, not once per request. No allocation.
 *
 * <p>Threads: every method may run on any Worker at once; the remembered trace ids are written and read racily,
 * which at worst forgets a trace (its outbound calls are then decided as from outside).
 */
final class TraceSampler {
    /** Why an exchange is exported; {@link #NONE}: it is not. Indexes of the counters in {@link Observability}. */
    static final byte NONE = 0;
    static final byte RESERVOIR = 1;
    static final byte RATIO = 2;
    static final byte PEER = 3;
    static final byte CALLER = 4;
    static final byte ERROR = 5;
    /** Label values of the reasons above, by index ({@code weft_trace_sampled_total{reason}}). */
    static final String[] REASONS = {"none", "reservoir", "ratio", "peer", "caller", "error"};

    /**
     * Sampled traces taken in on the inbound side, remembered so that the app's calls in them are continued. At
     * a few hundred sampled traces a second an id stays for tens of seconds, far longer than a request.
     */
    static final int CONTINUED = 4096;
    /** Outbound calls one remembered trace may continue: a fan-out, not an app reusing one id for everything. */
    static final int MAX_CONTINUATIONS = 64;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

    private final int perSecond;
    private final double ratio;
    private final boolean ratioAll;
    /** Root traces are sampled when a uniform non-negative long falls below this. */
    private final long ratioBelow;
    private final Bucket reservoir;
    private final Bucket errors;
    private final long[] continuedIds = new long[CONTINUED];
    private final int[] continuedUses = new int[CONTINUED];
    /** Per Worker: callers' "sampled" over the reservoir. */
    private final PerThread<long[]> capped = new PerThread<>(() -> new long[1]);

    /**
     * @param perSecond the reservoir: traces a second always sampled (0: none), and error spans a second exported
     * @param ratio     the share of the traces beyond the reservoir that are sampled, 0.0-1.0
     */
    TraceSampler(int perSecond, double ratio) {
        this(perSecond, ratio, System.nanoTime());
    }

    /** @param startNanos when the reservoirs are full: a {@code System.nanoTime()} value */
    TraceSampler(int perSecond, double ratio, long startNanos) {
        if (perSecond < 0) {
            throw new IllegalArgumentException("trace reservoir " + perSecond + " below zero (expected N/s, N >= 0)");
        }
        this.perSecond = perSecond;
        this.ratio = ratio;
        this.ratioAll = ratio >= 1.0;
        this.ratioBelow = (long) (ratio * Long.MAX_VALUE);
        this.reservoir = new Bucket(perSecond, startNanos);
        this.errors = new Bucket(perSecond, startNanos);
    }

    int perSecond() {
        return perSecond;
    }

    double ratio() {
        return ratio;
    }

    /**
     * Decides {@code x}'s sampling from what arrived ({@code x.sampled}, set by extraction) and sets it.
     *
     * @return the reason it is sampled, or {@link #NONE}
     */
    byte decide(ObservedExchange x, long nowNanos) {
        byte arrived = x.sampled;
        byte reason;
        if (x.direction == Direction.INBOUND && arrived != TracePropagation.UNDECIDED) {
            reason = arrived == TracePropagation.SAMPLED ? PEER : NONE;
            if (reason == PEER) {
                remember(x.traceLo);
            }
        } else if (arrived == TracePropagation.NOT_SAMPLED) {
            reason = NONE;
        } else if (arrived == TracePropagation.SAMPLED) {
            if (continues(x.traceLo)) {
                reason = PEER;
            } else if (reservoir.take(nowNanos)) {
                reason = CALLER;
            } else {
                PerThread.add(capped, 0, 1);
                reason = byRatio();
            }
        } else {
            reason = reservoir.take(nowNanos) ? RESERVOIR : byRatio();
        }
        x.sampled = reason == NONE ? TracePropagation.NOT_SAMPLED : TracePropagation.SAMPLED;
        return reason;
    }

    private byte byRatio() {
        return ratioAll || (ratioBelow > 0 && (ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE) < ratioBelow)
                ? RATIO : NONE;
    }

    /** Callers' "sampled" decisions that found the reservoir empty, and were decided by the ratio instead. */
    long callersCapped() {
        return capped.sum(c -> PerThread.read(c, 0));
    }

    /** Whether a failed exchange that was not sampled may be exported alone now (its own reservoir). */
    boolean exportError(long nowNanos) {
        return errors.take(nowNanos);
    }

    private static int slot(long traceLo) {
        // The low half of a random id is random; mixing guards against callers whose ids are not.
        long h = traceLo * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 52) & (CONTINUED - 1);
    }

    private void remember(long traceLo) {
        int i = slot(traceLo);
        if ((long) LONGS.getOpaque(continuedIds, i) != traceLo) {
            INTS.setOpaque(continuedUses, i, 0);
            LONGS.setOpaque(continuedIds, i, traceLo);
        }
    }

    private boolean continues(long traceLo) {
        int i = slot(traceLo);
        if (traceLo == 0 || (long) LONGS.getOpaque(continuedIds, i) != traceLo) {
            return false;
        }
        int uses = (int) INTS.getOpaque(continuedUses, i);
        if (uses >= MAX_CONTINUATIONS) {
            return false;
        }
        INTS.setOpaque(continuedUses, i, uses + 1);
        return true;
    }

    /**
     * A token bucket as GCRA: {@code tat} is the time the tokens taken so far are paid for; a token may be taken when
     * that, plus one token's interval, is not in the future, and the bucket holds at most a second's worth
     * ({@code tat} never lags more than a second behind). Padded so that the line it is written in holds nothing
     * the Workers read or write per request.
     */
    static final class Bucket {
        private static final VarHandle TAT;

        static {
            try {
                TAT = MethodHandles.lookup().findVarHandle(Bucket.class, "tat", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private static final long SECOND = 1_000_000_000L;
        @SuppressWarnings("unused")
        private long p1, p2, p3, p4, p5, p6, p7;
        private volatile long tat;
        @SuppressWarnings("unused")
        private long q1, q2, q3, q4, q5, q6, q7;
        private final long intervalNanos;

        /** @param perSecond tokens a second, and the most held at once; 0: never a token */
        Bucket(int perSecond, long nowNanos) {
            this.intervalNanos = perSecond <= 0 ? 0 : Math.max(1, SECOND / perSecond);
            this.tat = nowNanos - SECOND; // full at start: the first second's traffic is traced whole
        }

        boolean take(long nowNanos) {
            if (intervalNanos == 0) {
                return false;
            }
            while (true) {
                long t = tat;
                long next = Math.max(t, nowNanos - SECOND) + intervalNanos;
                if (next - nowNanos > 0) {
                    return false; // empty: one read, nothing written
                }
                if (TAT.compareAndSet(this, t, next)) {
                    return true;
                }
            }
        }
    }
}
