package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.protocol.Hex;

/**
 * The record of one exchange: its timeline, where it went, how it ended and its trace ids. The same object is the
 * metrics sample, the span and the access log line, so an observed request costs at most one allocation beyond the
 * trace headers (none when a record comes back, below); spans and log lines are formatted later, off the event loop.
 *
 * <p>Thread: written only on the exchange's Worker loop, up to {@link #end}; after that it is immutable and handed
 * to the exporter and access log threads through their queues (which publish it safely). When only the exporter
 * reads it, the exporter gives it back to its Worker once encoded ({@link SpanRing#giveBack}), and the Worker's
 * next exchange starts on it ({@link #begin}): with every request traced, one object less per request.
 */
final class ObservedExchange implements ExchangeTrace {
    final Observability owner;
    /** The Worker this exchange runs on: its counters, spare records and scratch ({@link WorkerCells}). */
    WorkerCells worker;
    Direction direction;
    String localService;
    String method;
    /** The request target as received; never a metric label (see {@link RouteTable}). */
    String path;
    String peer;
    long startNanos;
    long startEpochMicros;
    String route;
    /** Destination service: the local service for inbound, the routed service for outbound ("unknown" before). */
    String destination;
    String endpointId;
    String endpointAddress;

    // Trace context (0 = none); sampled is one of TracePropagation's UNDECIDED/NOT_SAMPLED/SAMPLED.
    long traceHi;
    long traceLo;
    long spanId;
    long parentId;
    byte sampled;
    /** Why this exchange is exported: one of {@link TraceSampler}'s reasons, {@link TraceSampler#NONE} if not. */
    byte sampleReason;
    boolean traceStarted;

    /**
     * Whether the steps between arrival and end are timed (admitted, connected, first byte): only where something
     * shows them, a sampled span or an access log line. Each is a clock reading, and in the mesh bench a reading
     * costs about what the rest of an event does (docs/benchmarks.md, session 14); a failure's span exported alone
     * (reason error) shows its start, duration, status and error, not those steps.
     */
    boolean timed;
    long admittedNanos;
    long connectedNanos;
    long sentNanos;
    long firstByteNanos;
    long endNanos;
    int attempts;
    int upstreamStatus;
    int status;
    long bytesIn;
    long bytesOut;
    String error;
    /**
     * The ring of the Worker that may use this object again once the exporter has encoded it, or null (an access
     * log reads it too, or it was offered to a shared ring): set by {@link SpanExporter#offer}.
     */
    SpanRing home;

    ObservedExchange(Observability owner, WorkerCells worker, Direction direction, String localService, String method,
                     String path, String peer, String route, long startNanos, long startEpochMicros) {
        this.owner = owner;
        begin(worker, direction, localService, method, path, peer, route, startNanos, startEpochMicros);
    }

    /**
     * Starts a new exchange's record: every field as a new object has it. A reused object (see {@link #home}) was
     * given back by the exporter after it encoded it, and nothing else refers to it as a record of its old exchange
     * (the old exchange calls nothing after {@link #end}).
     */
    void begin(WorkerCells worker, Direction direction, String localService, String method, String path, String peer,
               String route, long startNanos, long startEpochMicros) {
        this.worker = worker;
        this.direction = direction;
        this.localService = localService;
        this.method = method;
        this.path = path;
        this.peer = peer;
        this.route = route;
        this.startNanos = startNanos;
        this.startEpochMicros = startEpochMicros;
        this.destination = direction == Direction.INBOUND ? localService : UNKNOWN;
        endpointId = null;
        endpointAddress = null;
        traceHi = 0;
        traceLo = 0;
        spanId = 0;
        parentId = 0;
        sampled = TracePropagation.UNDECIDED;
        sampleReason = TraceSampler.NONE;
        traceStarted = false;
        timed = false;
        admittedNanos = 0;
        connectedNanos = 0;
        sentNanos = 0;
        firstByteNanos = 0;
        endNanos = 0;
        attempts = 0;
        upstreamStatus = 0;
        status = 0;
        bytesIn = 0;
        bytesOut = 0;
        error = null;
        home = null;
    }

    static final String UNKNOWN = "unknown";

    @Override
    public void routed(String destinationService, String routeName) {
        if (direction == Direction.OUTBOUND && destinationService != null) {
            destination = destinationService;
        }
        if (routeName != null) {
            route = routeName;
        }
    }

    @Override
    public void admitted(String destinationService, String endpointId, String endpointAddress) {
        if (attempts++ == 0 && timed) {
            admittedNanos = System.nanoTime();
        }
        // Inbound admission is to the local app's cluster ("app:<service>"); the label stays the local service.
        if (direction == Direction.OUTBOUND) {
            destination = destinationService;
        }
        this.endpointId = endpointId;
        this.endpointAddress = endpointAddress;
    }

    @Override
    public void connected() {
        if (timed) {
            connectedNanos = System.nanoTime();
        }
    }

    @Override
    public void sent(long nanos) {
        sentNanos = nanos;
    }

    @Override
    public void firstByte(int status) {
        if (timed) {
            firstByteNanos = System.nanoTime();
        }
        upstreamStatus = status;
    }

    @Override
    public void end(int status, long bytesIn, long bytesOut, String error, long nanos) {
        if (endNanos != 0) {
            return;
        }
        endNanos = nanos;
        this.status = status;
        this.bytesIn = bytesIn;
        this.bytesOut = bytesOut;
        this.error = error;
        owner.finished(this);
    }

    boolean isSampled() {
        return sampled == TracePropagation.SAMPLED;
    }

    /** Exported alone because it failed, not because its trace was sampled (a tag on its span says so). */
    boolean errorOnly() {
        return sampleReason == TraceSampler.ERROR;
    }

    boolean failed() {
        return error != null || status >= 500;
    }

    long durationMicros() {
        return Math.max(0, (endNanos - startNanos) / 1000);
    }

    /** Epoch microseconds of a System.nanoTime() taken during this exchange; 0 stays 0 (the step did not happen). */
    long epochMicros(long nanos) {
        return nanos == 0 ? 0 : startEpochMicros + (nanos - startNanos) / 1000;
    }

    String traceIdHex() {
        return Hex.of(traceHi, traceLo);
    }
}
