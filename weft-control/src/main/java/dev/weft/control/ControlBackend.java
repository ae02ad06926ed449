package dev.weft.control;

import dev.weft.registry.Endpoint;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Where the control plane keeps what its HTTP API serves: leases, endpoints, watches and policy documents. The API
 * handlers ({@link ControlHttpHandler}, {@link PolicyHttpHandler}) see only this interface, so the same API runs on
 * the embedded store (the data dir, the default) or on an external one such as etcd
 * ({@code ./weft control --registry etcd://...}), found by URL scheme through {@link ControlBackendProvider}.
 *
 * <p>Contract: every method may be called from any thread (event loops included) and must not block; results complete
 * on a backend thread. A failed operation completes exceptionally with a {@link ControlException} whose status and
 * code the API returns as is (404 "unknown-lease", 503 "registry-unavailable" ...); anything else becomes a 500.
 * Lease ids are opaque strings chosen by the backend. Revisions only ever grow within one backend.
 */
public interface ControlBackend extends AutoCloseable {

    record LeaseGrant(String leaseId, long ttlMillis) {}

    /** @param endpoints how many endpoints are bound to the lease, so a client can notice its endpoint went missing */
    record KeepAlive(String leaseId, long ttlMillis, int endpoints) {}

    /** A service's complete endpoint list, sorted by id, as of {@code revision}. */
    record ServiceSnapshot(String service, long revision, List<Endpoint> endpoints) {}

    record ServiceSummary(String name, int endpoints, long revision) {}

    record ServiceList(long revision, List<ServiceSummary> services) {}

    /**
     * @param endpoints "service/id" of each endpoint bound to the lease
     * @param owner     the service of the sidecar that took the lease, as recorded at grant; null when none was
     *                  (the operator took it, a sidecar on {@code etcd://} did, or an older control plane wrote it)
     */
    record LeaseInfo(String id, long ttlMillis, long remainingMillis, List<String> endpoints, String owner) {}

    /** Every policy document (name → YAML text) as of {@code revision}. */
    record Policies(long revision, Map<String, String> policies) {}

    /**
     * How the backend's store is doing, known locally without asking it (so {@code /metrics} answers in an outage).
     *
     * @param backend   "embedded" or "etcd"
     * @param store     where the state lives: the data dir, or the etcd members
     * @param connected whether the store took the last operation
     * @param errors    operations that failed because the store did not take them (unreachable etcd, full disk),
     *                  since start
     * @param lastError the last such failure, or null
     */
    record Connectivity(String backend, String store, boolean connected, long errors, String lastError) {}

    /** What {@code GET /v1/health} counts, read from the store. */
    record Counts(long revision, int services, int leases, int watchers) {}

    /**
     * Where a backend pushes a watched service's snapshots. Called on a backend thread, so implementations only hand
     * the line over (to a channel's event loop) and never block.
     */
    interface WatchSink {
        /** @param line one complete NDJSON line ({@link #watchLine}); the sink owns the array from here on */
        void send(byte[] line);
    }

    /** The watch-stream line for a snapshot; encode once and send the same array to every sink of the service. */
    static byte[] watchLine(ServiceSnapshot snapshot) {
        return ControlJson.line(ControlJson.SnapshotMessage.of(snapshot));
    }

    /**
     * Grants a lease and records its owner with it, in the store, for as long as the lease lives: so that who owns a
     * lease survives a restart of the control plane and is known to every control plane on the same store.
     *
     * @param owner the service of the sidecar taking it, or null (the operator: then the lease belongs to the
     *              service its endpoints name, docs/security.md "Leases are owned")
     */
    CompletableFuture<LeaseGrant> grantLease(long ttlMillis, String owner);

    CompletableFuture<KeepAlive> keepAlive(String leaseId);

    CompletableFuture<Void> revokeLease(String leaseId);

    /** Binds an endpoint to a live lease (replacing one with the same id); answers the service's new snapshot. */
    CompletableFuture<ServiceSnapshot> putEndpoint(Endpoint endpoint, String leaseId);

    CompletableFuture<ServiceSnapshot> deleteEndpoint(String service, String id);

    CompletableFuture<ServiceSnapshot> snapshot(String service);

    CompletableFuture<ServiceList> services();

    CompletableFuture<List<LeaseInfo>> leases();

    /**
     * One lease, read by its id (never by listing every lease): empty when no live lease has that id. A lease granted
     * but holding no endpoints is found too.
     */
    CompletableFuture<Optional<LeaseInfo>> lease(String leaseId);

    /** Reads the counts from the store; fails with 503 "registry-unavailable" when it does not answer. */
    CompletableFuture<Counts> counts();

    /** Immediate, never blocks. */
    Connectivity connectivity();

    /**
     * Starts pushing snapshots of {@code service} to {@code sink}: the current one at once unless the watcher already
     * has it ({@code sinceRevision}, negative for none), then one after every change.
     */
    CompletableFuture<Void> subscribe(String service, long sinceRevision, WatchSink sink);

    void unsubscribe(String service, WatchSink sink);

    CompletableFuture<Policies> policies();

    /** Stores a policy document, or removes it when {@code document} is null; answers the policies after the change. */
    CompletableFuture<Policies> putPolicy(String name, String document);

    /**
     * Calls {@code waiter} once, with the policies, as soon as their revision differs from {@code revision} (at once if
     * it already does). Returns a handle that drops the waiter (a long poll that timed out or whose client left).
     */
    Runnable awaitPolicyChange(long revision, Consumer<Policies> waiter);

    /** Stops the backend; the API is closed first, so nothing new arrives. */
    @Override
    void close();
}
