package dev.weft.registry.weft;

import dev.weft.registry.support.StartupTrace;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A lease taken before the endpoint it will carry ({@link WeftRegistry#prepareRegistration}): the sidecar asks for it
 * as it starts, and its registration, once the app answers, binds the endpoint to it in one call instead of two.
 *
 * <p>Used only while fresh, at most a third of its TTL old: the registration renews it a third of a TTL after binding
 * the endpoint, so a fresh lease is renewed well before it can expire. An older one is given back and the
 * registration takes its own, as it would have without one; so is one whose grant failed. A lease that nobody uses
 * (the sidecar stopped before its app answered) expires with its TTL: it carries no endpoint, so callers never see it.
 *
 * <p>Thread: the registry's event thread, where it is taken and handed over.
 */
final class PreparedLease {
    private final long ttlMillis;
    private final Duration callTimeout;
    /** The lease id, or null when it was not granted; completes on the event thread. */
    private final CompletableFuture<String> granted = new CompletableFuture<>();
    private long grantedAtNanos;

    private PreparedLease(Duration ttl) {
        this.ttlMillis = ttl.toMillis();
        this.callTimeout = WeftRegistry.callTimeout(ttl);
    }

    /** Asks the control plane for a lease of {@code ttl}; event thread. */
    static PreparedLease take(WeftRegistry registry, Duration ttl) {
        PreparedLease p = new PreparedLease(ttl);
        StartupTrace.mark("registration: lease taken ahead");
        registry.call("PUT", "/v1/leases", new WeftRegistry.LeaseRequest(p.ttlMillis).json(), p.callTimeout)
                .whenCompleteAsync((reply, error) -> {
                    p.grantedAtNanos = System.nanoTime();
                    p.granted.complete(registry.grantedLease(reply));
                }, registry.events());
        return p;
    }

    long ttlMillis() {
        return ttlMillis;
    }

    /**
     * Calls {@code use} on the event thread, once the grant is answered, with the lease id while it is fresh, else
     * with null (not granted, or too old: then it is revoked, so that it does not linger until its TTL).
     */
    void whenGranted(WeftRegistry registry, Consumer<String> use) {
        // Not thenAcceptAsync: the grant completes on the event thread and the registration starts on it, so either
        // way this runs there, and a second trip through the thread's queue would wait behind the start's other work
        // (the watches' first answers: 61 ms in session 16's traces).
        granted.thenAccept(id -> {
            if (id != null && System.nanoTime() - grantedAtNanos > TimeUnit.MILLISECONDS.toNanos(ttlMillis / 3)) {
                registry.call("DELETE", "/v1/leases/" + WeftRegistry.segment(id), null, callTimeout);
                id = null;
            }
            use.accept(id);
        });
    }
}
