package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * JSON-lines access log of one side (inbound or outbound) of a sidecar. Worker loops only enqueue the finished
 * exchange (lock free, bounded); a writer thread formats and writes the lines. When the sink is slower than the
 * traffic the queue fills and further lines are dropped and counted ({@code weft_access_log_dropped_total}):
 * requests never wait for the log.
 *
 * <p>Threads: {@link #offer} on any Worker; formatting and I/O on the "weft-access-log-SIDE" daemon thread only.
 */
final class AccessLog implements AutoCloseable {
    static final int DEFAULT_CAPACITY = 8192;
    /** Request targets longer than this are cut in the log line. */
    static final int MAX_PATH = 2048;
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Direction side;
    private final String sinkName;
    private final OutputStream out;
    private final boolean closeOut;
    private final BoundedQueue<ObservedExchange> queue;
    private final Thread thread;
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder writeErrors = new LongAdder();
    private volatile boolean closing;

    AccessLog(Direction side, String sinkName, OutputStream out, boolean closeOut, int capacity) {
        this.side = side;
        this.sinkName = sinkName;
        this.out = new BufferedOutputStream(out, 64 * 1024);
        this.closeOut = closeOut;
        this.queue = new BoundedQueue<>(capacity);
        this.thread = Thread.ofPlatform().daemon().name("weft-access-log-" + side.name().toLowerCase())
                .unstarted(this::run);
    }

    /** {@code stdout}, or a file path (appended to, created with its directories if missing). */
    static AccessLog open(Direction side, String sink) throws IOException {
        if (sink.equals("stdout")) {
            return new AccessLog(side, sink, new FileOutputStream(java.io.FileDescriptor.out), false, DEFAULT_CAPACITY);
        }
        Path p = Path.of(sink).toAbsolutePath();
        if (p.getParent() != null) {
            Files.createDirectories(p.getParent());
        }
        return new AccessLog(side, p.toString(), new FileOutputStream(p.toFile(), true), true, DEFAULT_CAPACITY);
    }

    void start() {
        thread.start();
    }

    /** Worker loops: queue a finished exchange's line; never waits. */
    void offer(ObservedExchange x) {
        if (!queue.offer(x)) {
            dropped.increment();
        }
    }

    private void run() {
        JsonText line = new JsonText(1024);
        while (true) {
            ObservedExchange x = queue.poll();
            if (x == null) {
                flush();
                if (closing) {
                    return;
                }
                LockSupport.parkNanos(IDLE_PARK_NANOS);
                continue;
            }
            format(x, line.reset());
            line.newline();
            try {
                out.write(line.array(), 0, line.length());
                written.increment();
            } catch (IOException e) {
                writeErrors.increment();
                dropped.increment();
            }
        }
    }

    private void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            writeErrors.increment();
        }
    }

    /** One line; the fields are listed in docs/observability.md. */
    static void format(ObservedExchange x, JsonText j) {
        j.beginObject();
        long s = x.startEpochMicros;
        j.field("time", Instant.ofEpochSecond(Math.floorDiv(s, 1_000_000), Math.floorMod(s, 1_000_000) * 1000L).toString());
        j.field("direction", x.direction == Direction.OUTBOUND ? "outbound" : "inbound");
        j.field("service", x.localService);
        j.field("method", x.method);
        j.field("path", x.path.length() > MAX_PATH ? x.path.substring(0, MAX_PATH) : x.path);
        j.field("route", x.route);
        j.field("dst_service", x.destination);
        j.field("endpoint", x.endpointId);
        j.field("endpoint_address", x.endpointAddress);
        j.field("status", x.status);
        if (x.upstreamStatus != 0) {
            j.field("upstream_status", x.upstreamStatus);
        }
        j.field("error", x.error);
        j.field("bytes_in", x.bytesIn);
        j.field("bytes_out", x.bytesOut);
        j.name("duration_ms").millis(x.durationMicros());
        step(j, "queue_ms", x.startNanos, x.admittedNanos);
        step(j, "connect_ms", x.admittedNanos, x.connectedNanos);
        step(j, "upstream_ms", x.sentNanos, x.firstByteNanos);
        if (x.attempts > 1) {
            j.field("attempts", x.attempts);
        }
        if (x.spanId != 0) {
            j.name("trace_id").hexValue(x.traceHi, x.traceLo);
            j.name("span_id").hexValue(x.spanId);
            j.field("sampled", x.isSampled() ? 1 : 0);
        }
        // InetSocketAddress.toString() forms ("/1.2.3.4:5", "name/1.2.3.4:5") are cut to the address, here rather
        // than on the event loop.
        String peer = x.peer;
        if (peer != null && peer.indexOf('/') >= 0) {
            peer = peer.substring(peer.lastIndexOf('/') + 1);
        }
        j.field("peer", peer);
        j.endObject();
    }

    private static void step(JsonText j, String name, long from, long to) {
        if (from != 0 && to != 0) {
            j.name(name).millis(Math.max(0, (to - from) / 1000));
        }
    }

    Direction side() {
        return side;
    }

    String sink() {
        return sinkName;
    }

    long written() {
        return written.sum();
    }

    long dropped() {
        return dropped.sum();
    }

    long writeErrors() {
        return writeErrors.sum();
    }

    int queued() {
        return queue.size();
    }

    /** Writes what is queued (waiting at most a second for a stuck sink), then closes a file sink. */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(thread);
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            return; // blocked in a write that will not finish: leave the daemon thread and the stream alone
        }
        if (closeOut) {
            try {
                out.close();
            } catch (IOException e) {
                // nothing left to tell anyone
            }
        } else {
            flush();
        }
    }
}
