package dev.weft.registry.etcd;

import dev.weft.registry.support.RegistrationStatus;
import dev.weft.registry.support.Backoff;

import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.options.PutOption;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps one endpoint registered in etcd: grants a lease, puts the endpoint's key bound to it, renews the lease every
 * ttl/3 and checks that the key is still there, and starts over under a new lease whenever etcd says the old one is
 * gone.
 *
 * <pre>
 *   grant --ok--> put --ok--> keepAlive (every ttl/3) --ok--> check key --same--> keepAlive ...
 *     ^            |              |                              |
 *     |            |              |                              +--missing or changed--> put
 *     +--lease not found----------+
 *     +--unrenewed for a whole TTL (long outage): a new lease, then the old one revoked
 *                 failures: retry the same step with backoff
 * </pre>
 *
 * <p>Why ttl/3: two renewals may fail (a leader election takes about two seconds) before the lease runs out. Why a new
 * lease after a long outage: the old one may have expired while this sidecar could not see etcd, or may not have
 * (etcd extends every lease when a new leader takes over); registering again settles it without guessing, and the
 * put that moves the key to the new lease does not change the endpoint watchers see.
 *
 * <p>Threading: the steps run on the registry's event thread; {@link #isRegistered()}, {@link #awaitRegistered} and
 * {@link #close()} may be called from any thread.
 */
final class EtcdRegistration implements Registration {
    private final EtcdRegistry registry;
    private final Endpoint endpoint;
    private final ByteSequence key;
    private final ByteSequence value;
    private final long ttlSeconds;
    private final Backoff backoff = new Backoff();
    private final RegistrationStatus status = new RegistrationStatus();
    // Written on the event thread, read by close() on any thread.
    private volatile long leaseId;
    private volatile boolean closed;
    // Event thread only.
    private ScheduledFuture<?> timer;
    private Runnable retryStep;   // the step waiting out a backoff after a failure, or null
    private long leaseTtlNanos;
    private Duration interval;
    private long renewedAtNanos;
    private long staleLease;

    EtcdRegistration(EtcdRegistry registry, Endpoint endpoint, Duration ttl) {
        this.registry = registry;
        this.endpoint = endpoint;
        this.key = registry.keys.endpointKey(endpoint);
        this.value = KeyLayout.encode(endpoint);
        this.ttlSeconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
    }

    void start() {
        registry.onEvents(this::grant);
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public boolean isRegistered() {
        return status.isRegistered();
    }

    @Override
    public boolean awaitRegistered(Duration timeout) throws InterruptedException {
        return status.await(timeout);
    }

    // --- event thread ---

    private void grant() {
        if (status.isStopped()) {
            return;
        }
        registry.call(() -> registry.client().getLeaseClient().grant(ttlSeconds))
                .whenCompleteAsync((granted, error) -> {
                    if (status.isStopped()) {
                        if (granted != null) {
                            // Closed while the lease was being granted: give it back rather than let it linger.
                            registry.call(() -> registry.client().getLeaseClient().revoke(granted.getID()));
                        }
                        return;
                    }
                    if (error != null) {
                        registry.failed("grant lease for " + this, error);
                        retry(this::grant);
                        return;
                    }
                    registry.contact();
                    leased(granted);
                    put();
                }, registry.events());
    }

    private void leased(LeaseGrantResponse granted) {
        long old = leaseId;
        if (old != 0 && old != granted.getID()) {
            staleLease = old;
        }
        leaseId = granted.getID();
        // etcd may lengthen the TTL (its minimum is 1.5 election timeouts); renewing by what it granted is what counts.
        long ttlMillis = TimeUnit.SECONDS.toMillis(Math.max(granted.getTTL(), 1));
        leaseTtlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        interval = Duration.ofMillis(Math.max(1, ttlMillis / 3));
        renewedAtNanos = System.nanoTime();
    }

    private void put() {
        if (status.isStopped()) {
            return;
        }
        long lease = leaseId;
        registry.call(() -> registry.client().getKVClient().put(key, value, PutOption.builder().withLeaseId(lease).build()))
                .whenCompleteAsync((ok, error) -> {
                    if (status.isStopped()) {
                        return;
                    }
                    if (error == null) {
                        registry.contact();
                        backoff.reset();
                        status.set(true);
                        revokeStaleLease();
                        schedule(this::keepAlive, interval);
                    } else if (EtcdRegistry.leaseNotFound(error)) {
                        // The lease ran out between grant and put: only a TTL shorter than the network's delays does
                        // that, so back off rather than spin.
                        registry.failed("register " + this, error);
                        status.set(false);
                        retry(this::grant);
                    } else {
                        registry.failed("register " + this, error);
                        if (unrenewedForWholeTtl()) {
                            status.set(false);
                            retry(this::grant);
                        } else {
                            retry(this::put);   // same lease while it may still be alive
                        }
                    }
                }, registry.events());
    }

    private void keepAlive() {
        if (status.isStopped()) {
            return;
        }
        long lease = leaseId;
        registry.call(() -> registry.client().getLeaseClient().keepAliveOnce(lease))
                .whenCompleteAsync((renewal, error) -> {
                    if (status.isStopped()) {
                        return;
                    }
                    if (error == null) {
                        registry.contact();
                        renewedAtNanos = System.nanoTime();
                        backoff.reset();
                        checkKey();
                    } else if (EtcdRegistry.leaseNotFound(error)) {
                        registry.failed("renew lease of " + this, error);
                        status.set(false);
                        grant();
                    } else {
                        registry.failed("renew lease of " + this, error);
                        if (unrenewedForWholeTtl()) {
                            if (status.isRegistered()) {
                                EtcdRegistry.LOG.log(System.Logger.Level.WARNING, "lease of {0} unrenewed for its "
                                        + "whole TTL; will register again under a new lease once etcd answers", this);
                            }
                            status.set(false);
                            retry(this::grant);
                        } else {
                            Duration next = backoff.next();
                            retryAfter(this::keepAlive, next.compareTo(interval) < 0 ? next : interval);
                        }
                    }
                }, registry.events());
    }

    /** The lease lives; is our key still on it? Someone may have deleted or overwritten it by hand. */
    private void checkKey() {
        long lease = leaseId;
        registry.call(() -> registry.client().getKVClient().get(key)).whenCompleteAsync((found, error) -> {
            if (status.isStopped()) {
                return;
            }
            if (error != null) {
                registry.failed("check key of " + this, error);
                schedule(this::keepAlive, interval);
                return;
            }
            List<KeyValue> kvs = found.getKvs();
            if (kvs.isEmpty() || kvs.getFirst().getLease() != lease || !kvs.getFirst().getValue().equals(value)) {
                EtcdRegistry.LOG.log(System.Logger.Level.WARNING, "key {0} was {1} by someone else; putting it back",
                        key, kvs.isEmpty() ? "deleted" : "changed");
                put();
            } else {
                status.set(true);
                schedule(this::keepAlive, interval);
            }
        }, registry.events());
    }

    private boolean unrenewedForWholeTtl() {
        return System.nanoTime() - renewedAtNanos >= leaseTtlNanos;
    }

    /** The lease given up after a long outage, if it survived it: revoking it removes nothing of ours any more. */
    private void revokeStaleLease() {
        long stale = staleLease;
        staleLease = 0;
        if (stale != 0) {
            registry.call(() -> registry.client().getLeaseClient().revoke(stale));
        }
    }

    private void retry(Runnable step) {
        retryAfter(step, backoff.next());
    }

    private void retryAfter(Runnable step, Duration delay) {
        retryStep = step;
        registry.schedule(() -> {
            retryStep = null;
            step.run();
        }, delay, f -> timer = f);
    }

    private void schedule(Runnable step, Duration delay) {
        retryStep = null;
        registry.schedule(step, delay, f -> timer = f);
    }

    /** Event thread: etcd answers again (another call got through), so a step waiting out its backoff goes now. */
    void wake() {
        Runnable step = retryStep;
        if (step != null && !status.isStopped()) {
            retryStep = null;
            if (timer != null) {
                timer.cancel(false);
            }
            step.run();
        }
    }

    /** Stops renewing without telling etcd, as a killed process would; see {@link EtcdRegistry#close()}. */
    void stopHeartbeats() {
        status.stop();
        registry.onEvents(() -> {
            if (timer != null) {
                timer.cancel(false);
            }
        });
    }

    /**
     * Stops renewing and revokes the lease, which deletes the key at once instead of after the TTL. Waits up to one
     * second for etcd's answer; if it cannot be reached the lease expires on its own.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopHeartbeats();
        registry.forget(this);
        long lease = leaseId;
        status.set(false);
        if (lease != 0 && !registry.isClosed()) {
            try {
                registry.call(() -> registry.client().getLeaseClient().revoke(lease))
                        .get(EtcdRegistry.DEREGISTER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                if (!EtcdRegistry.leaseNotFound(e)) {
                    registry.failed("deregister " + this, e);
                }
            }
        }
    }

    @Override
    public String toString() {
        long lease = leaseId;
        return endpoint.service() + "/" + endpoint.id() + (lease == 0 ? "" : " (lease " + Long.toHexString(lease) + ")");
    }
}
