package dev.weft.protocol;

import java.util.concurrent.atomic.LongAdder;

/**
 * Frame and byte counters of the WMP codec. One instance is shared by every connection of a sidecar, so each
 * event loop updates it concurrently: {@link LongAdder} keeps increments contention-free (a cell per contending
 * thread) at the price of reads that sum the cells, which only a metrics scrape does.
 *
 * <p>Thread safe. Reads are not a snapshot: counters read one after another may be from slightly different
 * moments.
 */
public final class WmpCodecMetrics {
    private final LongAdder framesIn = new LongAdder();
    private final LongAdder framesOut = new LongAdder();
    private final LongAdder bytesIn = new LongAdder();
    private final LongAdder bytesOut = new LongAdder();
    private final LongAdder[] errors = new LongAdder[WmpDecodeError.values().length];

    public WmpCodecMetrics() {
        for (int i = 0; i < errors.length; i++) {
            errors[i] = new LongAdder();
        }
    }

    /** Counts one well-formed frame decoded, of {@code bytes} bytes on the wire (head, header block and body). */
    public void frameIn(long bytes) {
        framesIn.increment();
        bytesIn.add(bytes);
    }

    /** Counts one frame encoded, of {@code bytes} bytes on the wire. Counted when encoded, not when flushed. */
    public void frameOut(long bytes) {
        framesOut.increment();
        bytesOut.add(bytes);
    }

    /** Counts one rejected input. */
    public void error(WmpDecodeError kind) {
        errors[kind.ordinal()].increment();
    }

    public long framesIn() {
        return framesIn.sum();
    }

    public long framesOut() {
        return framesOut.sum();
    }

    public long bytesIn() {
        return bytesIn.sum();
    }

    public long bytesOut() {
        return bytesOut.sum();
    }

    public long errors(WmpDecodeError kind) {
        return errors[kind.ordinal()].sum();
    }

    public long totalErrors() {
        long total = 0;
        for (LongAdder e : errors) {
            total += e.sum();
        }
        return total;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("WmpCodecMetrics{framesIn=").append(framesIn())
                .append(", framesOut=").append(framesOut())
                .append(", bytesIn=").append(bytesIn())
                .append(", bytesOut=").append(bytesOut());
        for (WmpDecodeError kind : WmpDecodeError.values()) {
            long n = errors(kind);
            if (n != 0) {
                sb.append(", ").append(kind).append('=').append(n);
            }
        }
        return sb.append('}').toString();
    }
}
