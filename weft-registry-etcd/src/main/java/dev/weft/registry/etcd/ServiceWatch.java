package dev.weft.registry.etcd;

import dev.weft.registry.support.Backoff;

import dev.weft.registry.Endpoint;
import dev.weft.registry.EndpointListener;
import dev.weft.registry.Watch;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Status;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ScheduledFuture;

/**
 * The one etcd watch of a service, shared by every listener of that service: list the service's prefix once, then
 * watch it from the revision after the list, applying each event to a local copy and handing listeners the whole
 * list after each change.
 *
 * <p>Resumption is what makes the list exact across failures. {@link #revision} is the store revision the local copy
 * is exact at. A broken stream (member killed, leader lost, network) is reopened with backoff from
 * {@code revision + 1}, so etcd replays exactly the events after it: none lost, none seen twice. If etcd compacted
 * those events away meanwhile (or was restored from an older backup and never had them), the watch is cancelled and
 * the service is listed afresh; the new list replaces the copy, so deletes missed meanwhile are not kept as phantom
 * endpoints. Listeners get a list only when it differs from the last one delivered, and a broken stream delivers
 * nothing, so they keep their last list while etcd is away.
 *
 * <p>Leader changes: the watch requires a leader ({@link WatchOption.Builder#withRequireLeader}), so a member that
 * loses its quorum cancels it instead of going silent with a stale view; the reopened watch lands on a member that
 * has one.
 *
 * <p>Threading: everything runs on the registry's event thread. jetcd calls the listener of each attempt on its own
 * threads, which only hop here. Each attempt gets a generation number; callbacks of an older attempt find a different
 * number and are ignored, which is what makes cancelling an attempt safe (jetcd also reopens streams by itself after
 * some errors; those reopened streams belong to an old generation and are closed).
 */
final class ServiceWatch {
    private final EtcdRegistry registry;
    private final String service;
    private final ByteSequence prefix;
    private final List<Subscriber> subscribers = new ArrayList<>();
    private final Backoff backoff = new Backoff();
    private SortedMap<String, Endpoint> current;   // null until the first list
    private long revision;
    private List<Endpoint> delivered;
    private long deliveredRevision;                 // the store revision the delivered list is exact at
    private long attempts;
    private long generation;                        // the live attempt, 0 when none
    private io.etcd.jetcd.Watch.Watcher watcher;
    private ScheduledFuture<?> retry;
    private boolean stopped;

    ServiceWatch(EtcdRegistry registry, String service) {
        this.registry = registry;
        this.service = service;
        this.prefix = registry.keys.servicePrefix(service);
    }

    void add(Subscriber subscriber) {
        subscribers.add(subscriber);
        if (delivered != null) {
            subscriber.deliver(delivered, deliveredRevision);
        }
        if (generation == 0 && retry == null && !stopped) {
            connect();
        }
    }

    /** @return whether this was the last subscriber, and the watch is stopped */
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

    /** etcd answers again (another call got through): reconnect now rather than at the end of the backoff step. */
    void wake() {
        if (retry != null && !stopped) {
            retry.cancel(false);
            connect();
        }
    }

    private void connect() {
        retry = null;
        if (stopped) {
            return;
        }
        if (current == null) {
            list();
        } else {
            watchFrom(revision + 1);
        }
    }

    private void list() {
        long gen = ++attempts;
        generation = gen;
        registry.call(() -> registry.client().getKVClient().get(prefix, GetOption.builder().isPrefix(true).build()))
                .whenCompleteAsync((listed, error) -> {
                    if (gen != generation) {
                        return;
                    }
                    if (error != null) {
                        broken(gen, error);
                        return;
                    }
                    registry.contact();
                    replace(listed);
                    watchFrom(revision + 1);
                }, registry.events());
    }

    private void replace(GetResponse listed) {
        SortedMap<String, Endpoint> fresh = new TreeMap<>();
        for (KeyValue kv : listed.getKvs()) {
            put(fresh, kv);
        }
        current = fresh;
        revision = listed.getHeader().getRevision();
        deliverIfChanged();
    }

    private void watchFrom(long start) {
        long gen = ++attempts;
        generation = gen;
        WatchOption option = WatchOption.builder()
                .isPrefix(true)
                .withRevision(start)
                .withRequireLeader(true)
                .withCreateNotify(true)
                .build();
        try {
            watcher = registry.client().getWatchClient().watch(prefix, option, io.etcd.jetcd.Watch.listener(
                    response -> registry.onEvents(() -> onResponse(gen, response)),
                    error -> registry.onEvents(() -> broken(gen, error)),
                    () -> registry.onEvents(() -> broken(gen, null))));
        } catch (RuntimeException e) {
            broken(gen, e);   // jetcd refuses new watches once closed
        }
    }

    private void onResponse(long gen, WatchResponse response) {
        if (gen != generation) {
            return;
        }
        registry.contact();
        if (response.isCreatedNotify()) {
            if (response.getHeader().getRevision() < revision) {
                // The member is behind what we have already seen: it lags, or etcd was restored from an older backup
                // and will number new changes with revisions we think we have. Either way a fresh list is exact.
                EtcdRegistry.LOG.log(System.Logger.Level.INFO, "etcd is at revision {0}, behind the {1} already seen "
                        + "for {2}; listing the service again", response.getHeader().getRevision(), revision, service);
                disconnect();
                current = null;
                registry.schedule(this::connect, backoff.next(), f -> retry = f);
            } else {
                backoff.reset();
            }
            return;
        }
        backoff.reset();
        if (response.isProgressNotify()) {
            // Every event up to the header's revision has been sent: resuming after it skips nothing.
            revision = Math.max(revision, response.getHeader().getRevision());
            return;
        }
        for (WatchEvent event : response.getEvents()) {
            KeyValue kv = event.getKeyValue();
            switch (event.getEventType()) {
                case PUT -> put(current, kv);
                case DELETE -> {
                    String id = KeyLayout.idOf(prefix, kv.getKey());
                    if (id != null) {
                        current.remove(id);
                    }
                }
                default -> { }
            }
            revision = Math.max(revision, kv.getModRevision());
        }
        deliverIfChanged();
    }

    private void put(SortedMap<String, Endpoint> into, KeyValue kv) {
        String id = KeyLayout.idOf(prefix, kv.getKey());
        if (id == null) {
            return;   // something else under the prefix (a deeper key): not an instance
        }
        try {
            into.put(id, KeyLayout.decode(service, id, kv.getValue()));
        } catch (IOException e) {
            // An unreadable value is no endpoint to send traffic to; the rest of the service is still fine.
            into.remove(id);
            EtcdRegistry.LOG.log(System.Logger.Level.WARNING, "ignoring unreadable endpoint at {0}: {1}",
                    kv.getKey(), e.getMessage());
        }
    }

    private void deliverIfChanged() {
        List<Endpoint> endpoints = List.copyOf(current.values());
        if (endpoints.equals(delivered)) {
            return;
        }
        delivered = endpoints;
        deliveredRevision = revision;
        for (Subscriber s : List.copyOf(subscribers)) {
            s.deliver(endpoints, revision);
        }
    }

    /** The attempt is over: etcd cancelled it, the connection broke, or it never started. {@code error} null: ended. */
    private void broken(long gen, Throwable error) {
        if (gen != generation) {
            return;
        }
        disconnect();
        if (stopped || registry.isClosed()) {
            return;
        }
        if (needsFreshList(error)) {
            // Not a failure of etcd: the events we need are gone. A new list is exact; no reason to wait.
            EtcdRegistry.LOG.log(System.Logger.Level.INFO, "watch of {0} cannot resume at revision {1} ({2}); "
                    + "listing the service again", service, revision + 1, EtcdRegistry.unwrap(error).getMessage());
            current = null;
            retry = null;
            list();
            return;
        }
        if (error == null) {
            registry.health.failure("watch " + service + ": etcd " + registry.settings.target() + " ended the stream");
        } else {
            registry.failed("watch " + service, error);
        }
        registry.schedule(this::connect, backoff.next(), f -> retry = f);
    }

    private boolean needsFreshList(Throwable error) {
        if (error == null || current == null) {
            return false;
        }
        Throwable t = EtcdRegistry.unwrap(error);
        // Compacted past our revision, or a "future revision": etcd was restored from a backup older than our view.
        return t instanceof CompactedException || EtcdRegistry.code(t) == Status.Code.OUT_OF_RANGE;
    }

    private void disconnect() {
        generation = 0;
        if (watcher != null) {
            io.etcd.jetcd.Watch.Watcher w = watcher;
            watcher = null;
            w.close();   // calls our onCompleted, which finds an old generation
        }
    }

    /** An {@link EndpointListener} also told the store revision each list is exact at (for the control plane). */
    interface RevisionListener extends EndpointListener {
        void onEndpoints(String service, long revision, List<Endpoint> endpoints);

        @Override
        default void onEndpoints(String service, List<Endpoint> endpoints) {
            onEndpoints(service, 0, endpoints);
        }
    }

    /** One {@link Watch}: a listener on the shared etcd watch. */
    static final class Subscriber implements Watch {
        private final EtcdRegistry registry;
        private final String service;
        private final EndpointListener listener;
        private volatile boolean closed;

        Subscriber(EtcdRegistry registry, String service, EndpointListener listener) {
            this.registry = registry;
            this.service = service;
            this.listener = listener;
        }

        String service() {
            return service;
        }

        /** Event thread. */
        void deliver(List<Endpoint> endpoints, long revision) {
            if (closed) {
                return;
            }
            try {
                if (listener instanceof RevisionListener withRevision) {
                    withRevision.onEndpoints(service, revision, endpoints);
                } else {
                    listener.onEndpoints(service, endpoints);
                }
            } catch (RuntimeException e) {
                EtcdRegistry.LOG.log(System.Logger.Level.ERROR, "endpoint listener for " + service + " failed", e);
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
