package dev.weft.registry.weft;

import dev.weft.registry.support.Backoff;
import dev.weft.registry.support.RegistrationStatus;
import dev.weft.registry.support.StartupTrace;

import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps one endpoint registered: takes a lease, binds the endpoint to it, renews it every ttl/3, and starts over
 * with a new lease whenever the control plane says the old one is gone.
 *
 * <pre>
 *   takeLease --200--> putEndpoint --200--> keepAlive (every ttl/3) --200--> keepAlive ...
 *       ^                  |                    |
 *       +-- unknown-lease -+--------------------+      failures: retry the same step with backoff
 * </pre>
 *
 * <p>Threading: the steps run on the registry's event thread; {@link #isRegistered()}, {@link #awaitRegistered}
 * and {@link #close()} may be called from any thread. Why ttl/3: two renewals may fail (a control plane restart, a
 * lost packet) before the lease runs out.
 */
final class WeftRegistration implements Registration {
    private final WeftRegistry registry;
    private final Endpoint endpoint;
    private final long ttlMillis;
    private final Duration interval;
    private final Duration callTimeout;
    private final String endpointPath;
    private final Backoff backoff = new Backoff();
    private final RegistrationStatus status = new RegistrationStatus();
    // Written on the event thread, read by close() on any thread.
    private volatile String leaseId;
    private volatile boolean closed;
    // Event thread only.
    private ScheduledFuture<?> timer;
    private long renewedAtNanos;

    WeftRegistration(WeftRegistry registry, Endpoint endpoint, Duration ttl) {
        this.registry = registry;
        this.endpoint = endpoint;
        this.ttlMillis = ttl.toMillis();
        this.interval = Duration.ofMillis(Math.max(1, ttlMillis / 3));
        // A renewal that takes longer than the lease is useless anyway.
        this.callTimeout = ttl.compareTo(WeftRegistry.CALL_TIMEOUT) < 0 ? ttl : WeftRegistry.CALL_TIMEOUT;
        this.endpointPath = "/v1/services/" + WeftRegistry.segment(endpoint.service()) + "/endpoints/"
                + WeftRegistry.segment(endpoint.id());
    }

    void start() {
        registry.onEvents(this::takeLease);
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

    private void takeLease() {
        if (status.isStopped()) {
            return;
        }
        leaseId = null;
        StartupTrace.mark("registration: lease requested");
        registry.call("PUT", "/v1/leases", new WeftRegistry.LeaseRequest(ttlMillis).json(), callTimeout)
                .whenCompleteAsync((reply, error) -> {
                    if (status.isStopped()) {
                        // Closed while the lease was being granted: give it back rather than let it linger.
                        String granted = grantedLease(reply);
                        if (granted != null) {
                            registry.call("DELETE", "/v1/leases/" + granted, null, callTimeout);
                        }
                        return;
                    }
                    String granted = grantedLease(reply);
                    if (granted == null) {
                        retry(this::takeLease);
                        return;
                    }
                    leaseId = granted;
                    StartupTrace.mark("registration: lease granted");
                    putEndpoint();
                }, registry.events());
    }

    private String grantedLease(WeftRegistry.Reply reply) {
        if (reply == null || !reply.ok()) {
            return null;
        }
        try {
            return WeftRegistry.LeaseGrant.read(reply.body()).leaseId();
        } catch (IOException e) {
            registry.health.rejected("PUT /v1/leases: unreadable reply: " + e.getMessage());
            return null;
        }
    }

    private void putEndpoint() {
        if (status.isStopped()) {
            return;
        }
        String lease = leaseId;
        WeftRegistry.EndpointBody body = new WeftRegistry.EndpointBody(endpoint.host(), endpoint.port(),
                endpoint.weight(), endpoint.capacity(), endpoint.metadata(), lease);
        registry.call("PUT", endpointPath, body.json(), callTimeout).whenCompleteAsync((reply, error) -> {
            if (status.isStopped()) {
                return;
            }
            if (reply != null && reply.ok()) {
                StartupTrace.mark("registration: endpoint accepted");
                renewed();
                schedule(this::keepAlive, interval);
            } else if (reply != null && "unknown-lease".equals(registry.errorCode(reply))) {
                status.set(false);
                takeLease();
            } else {
                if (reply != null) {
                    WeftRegistry.LOG.log(System.Logger.Level.WARNING, "control plane refused to register {0}/{1}: {2}",
                            endpoint.service(), endpoint.id(), registry.errorText(reply));
                }
                // Same lease while it may still be alive; if it expired meanwhile the answer is unknown-lease.
                retry(this::putEndpoint);
            }
        }, registry.events());
    }

    private void keepAlive() {
        if (status.isStopped()) {
            return;
        }
        registry.call("PUT", "/v1/leases/" + WeftRegistry.segment(leaseId) + "/keepalive", null, callTimeout)
                .whenCompleteAsync((reply, error) -> {
                    if (status.isStopped()) {
                        return;
                    }
                    if (reply != null && reply.ok()) {
                        renewed();
                        if (boundEndpoints(reply) == 0) {
                            // The lease lives but our endpoint is gone (deleted by hand, say): put it back.
                            putEndpoint();
                        } else {
                            schedule(this::keepAlive, interval);
                        }
                    } else if (reply != null && "unknown-lease".equals(registry.errorCode(reply))) {
                        status.set(false);
                        takeLease();
                    } else {
                        if (System.nanoTime() - renewedAtNanos >= TimeUnit.MILLISECONDS.toNanos(ttlMillis)) {
                            // Unrenewed for a whole TTL: the control plane has most likely expired us by now.
                            status.set(false);
                        }
                        // Keep the same lease: a restarted control plane restores it with a fresh TTL.
                        Duration next = backoff.next();
                        schedule(this::keepAlive, next.compareTo(interval) < 0 ? next : interval);
                    }
                }, registry.events());
    }

    private int boundEndpoints(WeftRegistry.Reply reply) {
        try {
            Integer n = WeftRegistry.KeepAliveReply.read(reply.body()).endpoints();
            return n == null ? 1 : n;
        } catch (IOException e) {
            return 1;
        }
    }

    private void renewed() {
        renewedAtNanos = System.nanoTime();
        backoff.reset();
        status.set(true);
    }

    private void retry(Runnable step) {
        schedule(step, backoff.next());
    }

    private void schedule(Runnable step, Duration delay) {
        registry.schedule(step, delay, f -> timer = f);
    }

    /** Stops renewing without telling the control plane, as a killed process would; see {@link WeftRegistry#close()}. */
    void stopHeartbeats() {
        status.stop();
        registry.onEvents(() -> {
            if (timer != null) {
                timer.cancel(false);
            }
        });
    }

    /**
     * Stops renewing and revokes the lease, which removes the endpoint at once instead of after the TTL. Waits up to
     * one second for the control plane's answer; if it cannot be reached the lease expires on its own.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopHeartbeats();
        registry.forget(this);
        String lease = leaseId;
        status.set(false);
        if (lease != null && !registry.isClosed()) {
            registry.callBlocking("DELETE", "/v1/leases/" + WeftRegistry.segment(lease),
                    WeftRegistry.DEREGISTER_TIMEOUT);
        }
    }

    @Override
    public String toString() {
        return "Registration[" + endpoint.service() + "/" + endpoint.id() + " lease=" + leaseId + "]";
    }
}
