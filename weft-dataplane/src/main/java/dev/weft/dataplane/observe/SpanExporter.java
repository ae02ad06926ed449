package dev.weft.dataplane.observe;

import dev.weft.registry.tls.ControlTrust;
import dev.weft.dataplane.metrics.PerThread;
import dev.weft.registry.http.SmallHttpClient;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends finished, sampled exchanges as spans to a collector (the control plane, Zipkin, or an OTLP collector),
 * in batches, from its own thread. Worker loops only {@link #offer}: two stores into the Worker's own ring
 * ({@link SpanRing}), which fails at once when the ring is full, in which case the span is dropped and counted; a slow
 * or dead collector therefore costs requests nothing but their spans. Every span is encoded here, off the loops.
 *
 * <p>Threads: {@link #offer} on any Worker; everything else on the "weft-span-exporter" daemon thread, which
 * blocks on HTTP (with timeouts) and otherwise sleeps until the next flush is due or a Worker's ring has taken another
 * batch's worth of spans (that Worker unparks it). It used to look every 50 ms, whether or not a span had come: about
 * half of the export threads' CPU in the mesh, and all of it while paused (docs/benchmarks.md, session 26).
 *
 * <p>The HTTP client is Weft's small Netty one (its own event loop, "weft-http-spans"), not the JDK's, whose TLS stack
 * alone loaded about 600 classes (docs/benchmarks.md). Each batch is posted once: a failed post is counted, not
 * retried, so a collector outage cannot build a backlog.
 */
final class SpanExporter implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(SpanExporter.class.getName());
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final URI endpoint;
    /** The control plane's trust when spans go to it over TLS; null otherwise. */
    private final ControlTrust trust;
    /** Null for none; else asked once per batch (docs/security.md, "Span posting"). */
    private final Observability.SpanCredentials credentials;
    /** Exporter thread only: the control plane refused the bearer (the join token expired), so every batch is signed. */
    private boolean bearerRefused;
    /** The request target the client sends for {@link #endpoint}, which a signature covers. */
    private final String target;
    private final SpanEncoder encoder;
    /** Each Worker's spans waiting; threads without a ring of their own share one, holding its monitor. */
    private final PerThread<SpanRing> rings;
    private final int capacity;
    private final int batchSize;
    private final long flushIntervalNanos;
    /**
     * Created on the exporter thread when it starts, not in the constructor: its classes and event loop are work the
     * sidecar's readiness need not wait for (docs/benchmarks.md, start-up). Volatile for {@link #close}.
     */
    private volatile SmallHttpClient http;
    /**
     * The batch being sent, encoded in place; reused. Owner: this thread. The HTTP client copies it once, into a
     * pooled direct buffer on its event loop before the call can finish, so it is free again as soon as
     * {@code sendBlocking} returns, even after a timeout with the write still pending.
     */
    private final JsonText body = new JsonText(64 * 1024);
    private final Thread thread;
    private final LongAdder exported = new LongAdder();
    private final LongAdder droppedQueueFull = new LongAdder();
    private final LongAdder droppedExportFailed = new LongAdder();
    /** Spans of batches the collector took, but not those spans (it said how many in its answer). */
    private final LongAdder droppedRefused = new LongAdder();
    private final LongAdder batches = new LongAdder();
    private volatile boolean closing;
    private volatile String lastError;
    private long lastWarnNanos;

    SpanExporter(URI endpoint, SpanEncoder encoder, int capacity, int batchSize, Duration flushInterval) {
        this(endpoint, encoder, capacity, batchSize, flushInterval, null);
    }

    /**
     * @param credentials what each batch proves the sidecar with (the control plane wants credentials for spans,
     *                    docs/security.md); null sends none: any other collector gets no secret of the mesh
     */
    SpanExporter(URI endpoint, SpanEncoder encoder, int capacity, int batchSize, Duration flushInterval,
                 Observability.SpanCredentials credentials) {
        this(endpoint, encoder, capacity, batchSize, flushInterval, credentials, null);
    }

    /** @param trust how to trust the control plane the spans go to, when it serves TLS; null: the JDK's defaults */
    SpanExporter(URI endpoint, SpanEncoder encoder, int capacity, int batchSize, Duration flushInterval,
                 Observability.SpanCredentials credentials, ControlTrust trust) {
        this.trust = trust;
        this.endpoint = endpoint;
        this.credentials = credentials;
        this.target = SmallHttpClient.requestTarget(endpoint);
        this.encoder = encoder;
        this.rings = new PerThread<>(() -> new SpanRing(capacity));
        this.capacity = capacity;
        this.batchSize = batchSize;
        this.flushIntervalNanos = flushInterval.toNanos();
        this.thread = Thread.ofPlatform().daemon().name("weft-span-exporter").unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    /** Worker loops: hand over a finished exchange that something else reads too; never waits. */
    void offer(ObservedExchange x) {
        offer(x, false);
    }

    /**
     * Worker loops: hand over a finished exchange; never waits.
     *
     * @param reusable whether nothing but the exporter reads {@code x} from now on: then, once encoded, it goes back
     *                 to this Worker for its next exchange ({@link #spare})
     */
    void offer(ObservedExchange x, boolean reusable) {
        SpanRing ring = rings.get();
        long offered;
        if (rings.isShared(ring)) {
            synchronized (ring) {
                offered = ring.offer(x) ? ring.offered() : -1;
            }
        } else {
            x.home = reusable ? ring : null;
            offered = ring.offer(x) ? ring.offered() : -1;
        }
        if (offered < 0) {
            droppedQueueFull.increment();
        } else if (offered % batchSize == 0) {
            // Once per batch's worth of this ring, not per span: an unpark is a system call when the exporter sleeps.
            LockSupport.unpark(thread);
        }
    }

    /** Worker loops: an exchange record the exporter is done with, or null (then the Worker makes one). */
    ObservedExchange spare() {
        SpanRing ring = rings.get();
        return rings.isShared(ring) ? null : ring.takeSpare();
    }

    private void run() {
        try {
            http = new SmallHttpClient("spans", Duration.ofSeconds(2), trust == null ? null : trust.netty());
        } catch (javax.net.ssl.SSLException e) {
            throw new IllegalStateException("cannot set up TLS to the span collector: " + e.getMessage(), e);
        }
        long lastSend = System.nanoTime();
        List<ObservedExchange> batch = new ArrayList<>(batchSize);
        while (true) {
            boolean stop = closing;
            long now = System.nanoTime();
            int queued = queued();
            if (queued >= batchSize || (queued > 0 && (now - lastSend >= flushIntervalNanos || stop))) {
                rings.forEach(ring -> ring.drainTo(batch, batchSize - batch.size()));
                send(batch);
                for (ObservedExchange x : batch) {
                    if (x.home != null) {
                        x.home.giveBack(x); // encoded: not read here any more
                    }
                }
                batch.clear();
                lastSend = System.nanoTime();
                continue;
            }
            if (stop) {
                return;
            }
            // Until the flush is due for what waits, or a whole interval when nothing does (a span arriving then
            // waits at most about one); a Worker whose ring fills a batch, or close, wakes it sooner.
            LockSupport.parkNanos(queued > 0 ? Math.max(lastSend + flushIntervalNanos - now, 1) : flushIntervalNanos);
        }
    }

    private void send(List<ObservedExchange> batch) {
        if (batch.isEmpty()) {
            return;
        }
        try {
            encoder.encode(batch, body);
            boolean viaBearer = credentials != null && credentials.bearer() != null && !bearerRefused;
            SmallHttpClient.Response response = post(viaBearer);
            if (response.status() == 401 && viaBearer) {
                // The join token expired: sign from now on, and send this batch once more, signed.
                bearerRefused = true;
                response = post(false);
            }
            if (response.status() / 100 == 2) {
                // The control plane stores a sidecar's spans only when they name its own service, and says in a 2xx
                // how many it left out (docs/security.md); Zipkin and other collectors answer with no body.
                int refused = refusedIn(response.bodyText(), batch.size());
                exported.add(batch.size() - refused);
                batches.increment();
                if (refused > 0) {
                    dropped(droppedRefused, refused, "the collector at " + endpoint + " stored the batch but "
                            + refused + " of its spans: " + abbreviate(response.bodyText()));
                }
                return;
            }
            failed(batch.size(), "HTTP " + response.status() + " from " + endpoint + ": " + abbreviate(response.bodyText()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed(batch.size(), "interrupted while sending to " + endpoint);
        } catch (Exception e) {
            failed(batch.size(), e.getClass().getSimpleName() + " sending to " + endpoint + ": " + e.getMessage());
        }
    }

    /**
     * Posts the encoded batch. The bearer (the join token, in memory) costs nothing per batch; a signature covers the
     * body, so it gets its own copy of the batch: a copy, a SHA-256 and an ECDSA signature per batch, about 0.9 ms for
     * a full one of {@link Observability#SPAN_BATCH} spans (docs/observability.md), on this thread, never on a Worker.
     */
    private SmallHttpClient.Response post(boolean viaBearer) throws Exception {
        String authorization = credentials == null ? null
                : viaBearer ? credentials.bearer().authorization("POST", target, null)
                : credentials.signed() == null ? null
                : credentials.signed().authorization("POST", target, Arrays.copyOf(body.array(), body.length()));
        Map<String, String> headers = authorization == null ? Map.of("Content-Type", encoder.contentType())
                : Map.of("Content-Type", encoder.contentType(), "Authorization", authorization);
        // Generous: on a saturated machine a late batch is better than a lost one, and the queue bounds memory.
        return http.sendBlocking("POST", endpoint, headers, body.array(), 0, body.length(), Duration.ofSeconds(10));
    }

    /**
     * The {@code "refused":N} of a 2xx answer's JSON body, at most {@code spans}; 0 when there is none. Read by hand:
     * one number from a short body, once a batch, on this thread.
     */
    static int refusedIn(String body, int spans) {
        int at = body == null ? -1 : body.indexOf("\"refused\":");
        if (at < 0) {
            return 0;
        }
        long n = 0;
        int i = at + "\"refused\":".length();
        while (i < body.length() && Character.isDigit(body.charAt(i)) && n <= spans) {
            n = n * 10 + (body.charAt(i++) - '0');
        }
        return (int) Math.min(n, spans);
    }

    private void failed(int spans, String why) {
        dropped(droppedExportFailed, spans, why);
    }

    private void dropped(LongAdder counter, int spans, String why) {
        counter.add(spans);
        lastError = why;
        long now = System.nanoTime();
        if (lastWarnNanos == 0 || now - lastWarnNanos > WARN_EVERY_NANOS) {
            lastWarnNanos = now;
            LOG.log(System.Logger.Level.WARNING, "weft: " + spans + " spans dropped: " + why
                    + " (counted in weft_spans_dropped_total; this warning repeats at most once a minute)");
        }
    }

    private static String abbreviate(String s) {
        return s == null ? "" : s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    URI endpoint() {
        return endpoint;
    }

    long exported() {
        return exported.sum();
    }

    long droppedQueueFull() {
        return droppedQueueFull.sum();
    }

    long droppedRefused() {
        return droppedRefused.sum();
    }

    long droppedExportFailed() {
        return droppedExportFailed.sum();
    }

    long batches() {
        return batches.sum();
    }

    /** Spans waiting, over every Worker's ring. */
    int queued() {
        return (int) rings.sum(SpanRing::size);
    }

    /** Spans that may wait per Worker. */
    int capacity() {
        return capacity;
    }

    String lastError() {
        return lastError;
    }

    /** Sends what is queued (up to {@code timeout}), then stops. */
    void close(Duration timeout) {
        closing = true;
        LockSupport.unpark(thread);
        try {
            thread.join(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            thread.interrupt();
        }
        SmallHttpClient client = http;
        if (client != null) {
            client.close();
        }
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(3));
    }
}
