package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ObservabilityConfig.Propagation;
import dev.weft.protocol.Hex;
import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Reads the caller's trace context from request headers (W3C traceparent, B3 single or multi header), makes this
 * sidecar's span a child of it (or starts a trace when there is none), and writes the new context onto the request
 * so the next hop continues the trace.
 *
 * <p>Formats written: those configured plus every format the request arrived with, so a hop that reads only B3
 * never sees a stale parent in headers the sidecar left untouched. {@code tracestate} is passed through as is.
 *
 * <p>Thread: the exchange's Worker loop; allocates only the header values it writes.
 */
final class TracePropagation {
    static final String TRACEPARENT = "traceparent";
    static final String B3 = "b3";
    static final String B3_TRACE_ID = "x-b3-traceid";
    static final String B3_SPAN_ID = "x-b3-spanid";
    static final String B3_PARENT_SPAN_ID = "x-b3-parentspanid";
    static final String B3_SAMPLED = "x-b3-sampled";
    static final String B3_FLAGS = "x-b3-flags";

    /** Sampling decision states. */
    static final byte UNDECIDED = -1;
    static final byte NOT_SAMPLED = 0;
    static final byte SAMPLED = 1;

    private static final int SEEN_W3C = 1;
    private static final int SEEN_B3 = 2;
    private static final int SEEN_B3MULTI = 4;
    /** A {@code traceparent} among the fields as text (besides, or instead of, one held as numbers). */
    private static final int W3C_FIELD = 8;
    /** Where {@link #extract} puts one more than the only traceparent field's index. */
    private static final int AT_SHIFT = 4;

    private final boolean writeW3c;
    private final boolean writeB3;
    private final boolean writeB3Multi;
    private final TraceSampler sampler;

    TracePropagation(Set<Propagation> write, TraceSampler sampler) {
        this.writeW3c = write.contains(Propagation.W3C);
        this.writeB3 = write.contains(Propagation.B3);
        this.writeB3Multi = write.contains(Propagation.B3MULTI);
        this.sampler = sampler;
    }

    TraceSampler sampler() {
        return sampler;
    }

    /**
     * Fills {@code x}'s trace ids and sampling decision from {@code h}, then writes the context for the next hop.
     *
     * @param nowNanos {@code System.nanoTime()} of the request's arrival, for the sampler's reservoir
     */
    void propagate(HeaderAccess h, ObservedExchange x, long nowNanos) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int seen = extract(h, x);
        if (x.traceLo == 0 && x.traceHi == 0) {
            // No usable context: this sidecar starts the trace. 128-bit ids, as W3C asks for.
            x.traceHi = nonZero(random);
            x.traceLo = nonZero(random);
            x.parentId = 0;
            x.traceStarted = true;
        }
        // Made where the trace starts (or where a caller deferred it) and carried on, so that a trace is either
        // whole or absent; what arrived from outside the mesh is honoured only within bounds (TraceSampler).
        x.sampleReason = sampler.decide(x, nowNanos);
        x.spanId = nonZero(random);
        inject(h, x, seen);
    }

    /**
     * @return the formats found, as SEEN_* bits, and above them ({@link #AT_SHIFT}) one more than the index of the
     *         request's only {@code traceparent} field when its fields were walked, else 0: where to write the next one
     */
    static int extract(HeaderAccess h, ObservedExchange x) {
        String tp;
        String b3;
        String b3TraceId;
        String b3SpanId;
        String b3Sampled;
        String b3Flags;
        int tpAt = -1;
        int seen = 0;
        WmpHeaders f = h.fields();
        if (f != null) {
            // One walk over the fields for every name, where a get per name walked them six times (JFR: the walks
            // were a tenth of observability's CPU per request).
            tp = b3 = b3TraceId = b3SpanId = b3Sampled = b3Flags = null;
            int tps = 0;
            for (int i = 0, n = f.size(); i < n; i++) {
                String name = f.name(i);
                switch (name.length()) {
                    case 2 -> {
                        if (b3 == null && name.equals(B3)) {
                            b3 = f.value(i);
                        }
                    }
                    case 10 -> {
                        if (b3Flags == null && name.equals(B3_FLAGS)) {
                            b3Flags = f.value(i);
                        }
                    }
                    case 11 -> {
                        if (name.equals(TRACEPARENT)) {
                            if (tps++ == 0) {
                                tp = f.value(i);
                                tpAt = i;
                            }
                        } else if (b3SpanId == null && name.equals(B3_SPAN_ID)) {
                            b3SpanId = f.value(i);
                        }
                    }
                    case 12 -> {
                        if (b3TraceId == null && name.equals(B3_TRACE_ID)) {
                            b3TraceId = f.value(i);
                        } else if (b3Sampled == null && name.equals(B3_SAMPLED)) {
                            b3Sampled = f.value(i);
                        }
                    }
                    default -> {
                    }
                }
            }
            if (tps > 1) {
                tpAt = -1; // set() replaces the first and drops the others
            }
            if (tps > 0) {
                seen = W3C_FIELD;
            }
        } else {
            tp = h.get(TRACEPARENT);
            b3 = h.get(B3);
            b3TraceId = h.get(B3_TRACE_ID);
            b3SpanId = h.get(B3_SPAN_ID);
            b3Sampled = h.get(B3_SAMPLED);
            b3Flags = h.get(B3_FLAGS);
        }
        x.sampled = UNDECIDED;
        Traceparent held = h.traceparent();
        if (held != null) {
            // Read strictly where it arrived (the WMP decoder): the first traceparent, valid, nothing to parse.
            seen |= SEEN_W3C;
            x.traceHi = held.traceHi();
            x.traceLo = held.traceLo();
            x.parentId = held.parentId();
            x.sampled = held.sampled() ? SAMPLED : NOT_SAMPLED;
        } else if (tp != null) {
            seen |= SEEN_W3C;
            parseTraceparent(tp, x);
        }
        if (b3 != null) {
            seen |= SEEN_B3;
            if (x.traceLo == 0 && x.traceHi == 0) {
                parseB3Single(b3, x);
            }
        }
        if (b3TraceId != null || b3Sampled != null || b3Flags != null) {
            seen |= SEEN_B3MULTI;
            if (x.traceLo == 0 && x.traceHi == 0) {
                parseB3Multi(b3TraceId, b3SpanId, b3Sampled, b3Flags, x);
            }
        }
        return seen | (tpAt + 1) << AT_SHIFT;
    }

    /** {@code version-traceid-parentid-flags}, by W3C's rules ({@link Traceparent#parse}); a bad one is ignored whole. */
    static void parseTraceparent(String v, ObservedExchange x) {
        Traceparent t = Traceparent.parse(v);
        if (t != null) {
            x.traceHi = t.traceHi();
            x.traceLo = t.traceLo();
            x.parentId = t.parentId();
            x.sampled = t.sampled() ? SAMPLED : NOT_SAMPLED;
        }
    }

    /** {@code traceid-spanid[-sampling[-parentspanid]]} or a lone sampling state ({@code 0}, {@code 1}, {@code d}). */
    static void parseB3Single(String v, ObservedExchange x) {
        if (v.length() == 1) {
            x.sampled = samplingState(v.charAt(0));
            return;
        }
        int dash = v.indexOf('-');
        int idLen = dash;
        if ((idLen != 16 && idLen != 32) || v.length() < dash + 17 || !Hex.isHex(v, 0, idLen)
                || !Hex.isHex(v, dash + 1, 16)) {
            return;
        }
        long hi = idLen == 32 ? Hex.parse(v, 0, 16, 0) : 0;
        long lo = Hex.parse(v, idLen - 16, 16, 0);
        long span = Hex.parse(v, dash + 1, 16, 0);
        if ((hi == 0 && lo == 0) || span == 0) {
            return;
        }
        byte sampled = UNDECIDED;
        int after = dash + 17;
        if (v.length() > after) {
            if (v.charAt(after) != '-' || v.length() < after + 2) {
                return;
            }
            sampled = samplingState(v.charAt(after + 1));
        }
        x.traceHi = hi;
        x.traceLo = lo;
        x.parentId = span;
        x.sampled = sampled;
    }

    static void parseB3Multi(String traceId, String spanId, String sampled, String flags, ObservedExchange x) {
        byte decision = UNDECIDED;
        if ("1".equals(flags)) {
            decision = SAMPLED; // debug
        } else if (sampled != null) {
            decision = sampled.equals("1") || sampled.equalsIgnoreCase("true") ? SAMPLED
                    : sampled.equals("0") || sampled.equalsIgnoreCase("false") ? NOT_SAMPLED : UNDECIDED;
        }
        x.sampled = decision;
        if (traceId == null || spanId == null) {
            return;
        }
        int len = traceId.length();
        if ((len != 16 && len != 32) || spanId.length() != 16 || !Hex.isHex(traceId, 0, len) || !Hex.isHex(spanId, 0, 16)) {
            return;
        }
        long hi = len == 32 ? Hex.parse(traceId, 0, 16, 0) : 0;
        long lo = Hex.parse(traceId, len - 16, 16, 0);
        long span = Hex.parse(spanId, 0, 16, 0);
        if ((hi == 0 && lo == 0) || span == 0) {
            return;
        }
        x.traceHi = hi;
        x.traceLo = lo;
        x.parentId = span;
    }

    private static byte samplingState(char c) {
        return switch (c) {
            case '1', 'd' -> SAMPLED;
            case '0' -> NOT_SAMPLED;
            default -> UNDECIDED;
        };
    }

    private void inject(HeaderAccess h, ObservedExchange x, int seen) {
        boolean sampled = x.sampled == SAMPLED;
        if (writeW3c || (seen & SEEN_W3C) != 0) {
            Traceparent next = new Traceparent(x.traceHi, x.traceLo, x.spanId, sampled ? 1 : 0);
            int at = (seen >>> AT_SHIFT) - 1;
            if (h.traceparent(next)) {
                // Held as numbers, written as the field by the codecs: no String, no check or parse at the next hop.
                if (at >= 0) {
                    h.fields().removeAt(at); // the caller's field, found by the walk: no second walk
                } else if ((seen & W3C_FIELD) != 0) {
                    h.fields().remove(TRACEPARENT);
                }
            } else if (at >= 0) {
                h.fields().value(at, next.toString()); // where the caller's stood
            } else {
                h.set(TRACEPARENT, next.toString());
            }
        }
        if (writeB3 || (seen & SEEN_B3) != 0) {
            h.set(B3, b3(x.traceHi, x.traceLo, x.spanId, sampled));
        }
        if (writeB3Multi || (seen & SEEN_B3MULTI) != 0) {
            h.set(B3_TRACE_ID, x.traceHi == 0 ? Hex.of(x.traceLo) : Hex.of(x.traceHi, x.traceLo));
            h.set(B3_SPAN_ID, Hex.of(x.spanId));
            if (x.parentId != 0) {
                h.set(B3_PARENT_SPAN_ID, Hex.of(x.parentId));
            }
            h.set(B3_SAMPLED, sampled ? "1" : "0");
        }
    }

    /** 64-bit trace ids stay 64-bit in B3, so B3-only tracers see the id they sent. */
    static String b3(long hi, long lo, long span, boolean sampled) {
        int idLen = hi == 0 ? 16 : 32;
        byte[] c = new byte[idLen + 19];
        if (hi != 0) {
            Hex.write(hi, c, 0);
        }
        Hex.write(lo, c, idLen - 16);
        c[idLen] = '-';
        Hex.write(span, c, idLen + 1);
        c[idLen + 17] = '-';
        c[idLen + 18] = (byte) (sampled ? '1' : '0');
        return new String(c, StandardCharsets.ISO_8859_1);
    }

    private static long nonZero(ThreadLocalRandom random) {
        long v;
        do {
            v = random.nextLong();
        } while (v == 0);
        return v;
    }
}
