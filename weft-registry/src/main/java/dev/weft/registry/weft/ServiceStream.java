package dev.weft.registry.weft;

import dev.weft.registry.support.Backoff;

import dev.weft.registry.Endpoint;
import dev.weft.registry.EndpointListener;
import dev.weft.registry.Watch;

import dev.weft.registry.http.SmallHttpClient;
import dev.weft.registry.http.StreamListener;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;

/**
 * The one long-lived watch stream of a service, shared by every listener of that service: a chunked
 * {@code GET /v1/watch/{service}?revision=N} read line by line, reopened with backoff whenever it breaks.
 *
 * <p>Threading: everything runs on the registry's event thread, except {@link Lines}, which the HTTP client calls on
 * its event loop and which only hops back here. Each connection attempt gets a generation number; callbacks from
 * an older attempt find a different number and are ignored, which is what makes cancelling a stream safe.
 *
 * <p>Delivery rules: listeners get a snapshot only when it differs from the last one delivered, and a broken stream
 * delivers nothing, so they keep their last list. Resuming with {@code ?revision=N} lets the control plane skip a
 * snapshot the client already has.
 */
final class ServiceStream {
    private final WeftRegistry registry;
    private final String service;
    private final List<Subscriber> subscribers = new ArrayList<>();
    private final Backoff backoff = new Backoff();
    private List<Endpoint> delivered;
    private long revision = -1;
    private long attempts;
    private long generation;          // the live attempt, 0 when none
    private boolean rejected;         // the live attempt got an HTTP error instead of a stream
    private boolean everOpened;
    private long lastHeardNanos;
    private SmallHttpClient.Cancellable exchange;
    private ScheduledFuture<?> retry;
    private boolean stopped;

    ServiceStream(WeftRegistry registry, String service) {
        this.registry = registry;
        this.service = service;
    }

    void add(Subscriber subscriber) {
        subscribers.add(subscriber);
        if (delivered != null) {
            subscriber.deliver(delivered);
        }
        if (generation == 0 && retry == null && !stopped) {
            connect();
        }
    }

    /** @return whether this was the last subscriber, and the stream is stopped */
    boolean remove(Subscriber subscriber) {
        subscribers.remove(subscriber);
        if (subscribers.isEmpty()) {
            stop();
            return true;
        }
        return false;
    }

    void stop() {
        stopped = true;
        disconnect();
        if (retry != null) {
            retry.cancel(false);
            retry = null;
        }
    }

    private void connect() {
        retry = null;
        long gen = ++attempts;
        generation = gen;
        rejected = false;
        lastHeardNanos = System.nanoTime();
        String path = "/v1/watch/" + WeftRegistry.segment(service) + (revision >= 0 ? "?revision=" + revision : "");
        // No request timeout: it would cut the stream; the silence check covers a hung connect or header phase too.
        exchange = registry.http.stream(registry.uri(path),
                registry.headers("GET", path, null, null, "application/x-ndjson"), new Lines(gen));
    }

    private void refused(long gen, int status, byte[] body) {
        if (gen != generation) {
            return;
        }
        rejected = true;
        String text = registry.errorText(new WeftRegistry.Reply(status, body));
        registry.health.rejected("watch " + service + ": " + text);
        WeftRegistry.LOG.log(System.Logger.Level.WARNING, "control plane refused to watch {0}: {1}", service, text);
    }

    private void onLine(long gen, String line) {
        if (gen != generation) {
            return;
        }
        lastHeardNanos = System.nanoTime();
        if (!everOpened || backoff.attempts() > 0) {
            everOpened = true;
            backoff.reset();
        }
        registry.health.success();
        if (line.isBlank()) {
            return;
        }
        WeftRegistry.WatchLine message;
        try {
            message = WeftRegistry.WatchLine.read(line);
        } catch (IOException | RuntimeException e) {
            // Skipping one line beats reconnecting forever over a line that will come back the same.
            WeftRegistry.LOG.log(System.Logger.Level.WARNING, "ignoring unreadable watch line for " + service
                    + ": " + line, e);
            return;
        }
        if (!"snapshot".equals(message.type())) {
            return;   // heartbeat: it has done its job by arriving
        }
        revision = message.revision();
        List<Endpoint> endpoints = message.endpoints() == null ? List.of() : List.copyOf(message.endpoints());
        if (endpoints.equals(delivered)) {
            return;
        }
        delivered = endpoints;
        for (Subscriber s : List.copyOf(subscribers)) {
            s.deliver(endpoints);
        }
    }

    /** The attempt is over: the server ended it, the network broke it, or it never connected. */
    private void ended(long gen, Throwable error) {
        if (gen != generation) {
            return;
        }
        generation = 0;
        exchange = null;
        if (!rejected) {
            registry.health.failure(error == null ? "watch " + service + ": stream ended by the control plane"
                    : registry.describe("watch", service, error));
        }
        if (!stopped) {
            registry.schedule(this::connect, backoff.next(), f -> retry = f);
        }
    }

    void checkSilence() {
        if (generation == 0) {
            return;
        }
        long silentNanos = System.nanoTime() - lastHeardNanos;
        if (silentNanos > registry.streamSilenceLimit.toNanos()) {
            cancelExchange();
            ended(generation, new IOException("no line (snapshot or heartbeat) for "
                    + registry.streamSilenceLimit.toMillis() + " ms; reopening"));
        }
    }

    private void disconnect() {
        generation = 0;
        cancelExchange();
    }

    private void cancelExchange() {
        // Cancelling closes the connection; the control plane then sees EOF and forgets this watcher.
        if (exchange != null) {
            exchange.cancel();
            exchange = null;
        }
    }

    /** Receives the lines of one attempt on the HTTP client's event loop and hands them to the event thread. */
    private final class Lines implements StreamListener {
        private final long gen;

        Lines(long gen) {
            this.gen = gen;
        }

        @Override
        public void onLine(String line) {
            registry.onEvents(() -> ServiceStream.this.onLine(gen, line));
        }

        @Override
        public void onRefused(int status, byte[] body) {
            registry.onEvents(() -> refused(gen, status, body));
        }

        @Override
        public void onEnd(Throwable error) {
            registry.onEvents(() -> ended(gen, error));
        }
    }

    /** One {@link Watch}: a listener on the shared stream. */
    static final class Subscriber implements Watch {
        private final WeftRegistry registry;
        private final String service;
        private final EndpointListener listener;
        private volatile boolean closed;

        Subscriber(WeftRegistry registry, String service, EndpointListener listener) {
            this.registry = registry;
            this.service = service;
            this.listener = listener;
        }

        String service() {
            return service;
        }

        /** Event thread. */
        void deliver(List<Endpoint> endpoints) {
            if (closed) {
                return;
            }
            try {
                listener.onEndpoints(service, endpoints);
            } catch (RuntimeException e) {
                WeftRegistry.LOG.log(System.Logger.Level.ERROR, "endpoint listener for " + service + " failed", e);
            }
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                registry.unwatch(this);
            }
        }
    }
}
