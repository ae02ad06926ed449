package dev.weft.registry.etcd;

import dev.weft.registry.support.Backoff;

import dev.weft.registry.PolicyListener;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Watches the policy documents under {@code ROOT/v1/policies/}: list them, deliver the set if it changed, then wait on
 * an etcd watch from the next revision and list again whenever anything under the prefix changes. Listing again
 * (instead of applying the watch events) keeps the delivered set exact whatever happened meanwhile: a compaction, a
 * reconnect or a leader change can at worst cause one extra list, never a lost or replayed document.
 *
 * <p>Thread: one virtual thread per watch; listener calls happen on it. While etcd is unreachable it retries with
 * backoff and delivers nothing, so sidecars keep the policies they have.
 */
final class PolicyWatch implements dev.weft.registry.Watch {
    private final EtcdRegistry registry;
    private final Listener listener;
    private final Semaphore changed = new Semaphore(0);
    private final Thread thread;
    private volatile boolean closed;

    /** Also told the store revision of the list a delivered set came from (the control plane's long poll needs it). */
    interface Listener {
        void onPolicies(long revision, Map<String, String> documents);
    }

    PolicyWatch(EtcdRegistry registry, PolicyListener listener) {
        this(registry, (revision, documents) -> listener.onPolicies(documents));
    }

    PolicyWatch(EtcdRegistry registry, Listener listener) {
        this.registry = registry;
        this.listener = listener;
        this.thread = Thread.ofVirtual().name("weft-etcd-policy-watch").start(this::run);
    }

    private void run() {
        ByteSequence prefix = registry.keys.policiesPrefix();
        Map<String, String> delivered = null;
        Backoff backoff = new Backoff();
        while (!closed) {
            Watch.Watcher watcher = null;
            try {
                GetResponse list = registry.call(() -> registry.client().getKVClient()
                        .get(prefix, GetOption.builder().isPrefix(true).build())).get();
                Map<String, String> docs = documents(prefix, list);
                if (!docs.equals(delivered)) {
                    delivered = docs;
                    listener.onPolicies(list.getHeader().getRevision(), Map.copyOf(docs));
                }
                backoff.reset();
                changed.drainPermits();
                watcher = registry.client().getWatchClient().watch(prefix,
                        WatchOption.builder().isPrefix(true).withRevision(list.getHeader().getRevision() + 1).build(),
                        Watch.listener(r -> changed.release(), e -> changed.release(), changed::release));
                // Woken by any change (or a broken watch); the periodic re-list also covers a silently dead watch.
                changed.tryAcquire(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                try {
                    Thread.sleep(backoff.next().toMillis());
                } catch (InterruptedException ie) {
                    return;
                }
            } finally {
                if (watcher != null) {
                    watcher.close();
                }
            }
        }
    }

    /** The documents of a list of {@code prefix}: name (the key after the prefix) → text. */
    static Map<String, String> documents(ByteSequence prefix, GetResponse list) {
        Map<String, String> docs = new TreeMap<>();
        String base = prefix.toString(StandardCharsets.UTF_8);
        for (KeyValue kv : list.getKvs()) {
            docs.put(kv.getKey().toString(StandardCharsets.UTF_8).substring(base.length()),
                    kv.getValue().toString(StandardCharsets.UTF_8));
        }
        return docs;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
