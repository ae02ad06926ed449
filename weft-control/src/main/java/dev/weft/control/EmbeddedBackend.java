package dev.weft.control;

import dev.weft.registry.Endpoint;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The default {@link ControlBackend}: everything in the control plane's data dir. Registry operations run on the
 * single store thread of {@link RegistryStore}; policy writes, which fsync, run on virtual threads so that no event
 * loop waits on the disk.
 */
final class EmbeddedBackend implements ControlBackend {
    private final RegistryStore registry;
    private final PolicyStore policies;
    private final String dataDir;
    private final ExecutorService policyWriters = Executors.newVirtualThreadPerTaskExecutor();

    private EmbeddedBackend(RegistryStore registry, PolicyStore policies, String dataDir) {
        this.registry = registry;
        this.policies = policies;
        this.dataDir = dataDir;
    }

    /**
     * Opens (or creates) the data dir, takes its lock and restores registrations and policies.
     *
     * @throws IOException if the dir is unusable, locked by another control plane, or its state unreadable
     */
    static EmbeddedBackend open(Path dataDir) throws IOException {
        RegistryStore store = RegistryStore.open(dataDir, System::nanoTime);
        try {
            return new EmbeddedBackend(store, new PolicyStore(dataDir),
                    dataDir.toAbsolutePath().normalize().toString());
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
    }

    @Override
    public CompletableFuture<LeaseGrant> grantLease(long ttlMillis, String owner) {
        return registry.grantLease(ttlMillis, owner);
    }

    @Override
    public CompletableFuture<KeepAlive> keepAlive(String leaseId) {
        return registry.keepAlive(leaseId);
    }

    @Override
    public CompletableFuture<Void> revokeLease(String leaseId) {
        return registry.revokeLease(leaseId);
    }

    @Override
    public CompletableFuture<ServiceSnapshot> putEndpoint(Endpoint endpoint, String leaseId) {
        return registry.putEndpoint(endpoint, leaseId);
    }

    @Override
    public CompletableFuture<ServiceSnapshot> deleteEndpoint(String service, String id) {
        return registry.deleteEndpoint(service, id);
    }

    @Override
    public CompletableFuture<ServiceSnapshot> snapshot(String service) {
        return registry.snapshot(service);
    }

    @Override
    public CompletableFuture<ServiceList> services() {
        return registry.services();
    }

    @Override
    public CompletableFuture<List<LeaseInfo>> leases() {
        return registry.leases();
    }

    @Override
    public CompletableFuture<Optional<LeaseInfo>> lease(String leaseId) {
        return registry.lease(leaseId);
    }

    @Override
    public CompletableFuture<Counts> counts() {
        return registry.counts();
    }

    @Override
    public Connectivity connectivity() {
        return registry.connectivity(dataDir);
    }

    @Override
    public CompletableFuture<Void> subscribe(String service, long sinceRevision, WatchSink sink) {
        return registry.subscribe(service, sinceRevision, sink);
    }

    @Override
    public void unsubscribe(String service, WatchSink sink) {
        registry.unsubscribe(service, sink);
    }

    @Override
    public CompletableFuture<Policies> policies() {
        return CompletableFuture.completedFuture(policies.snapshot());
    }

    @Override
    public CompletableFuture<Policies> putPolicy(String name, String document) {
        CompletableFuture<Policies> result = new CompletableFuture<>();
        policyWriters.execute(() -> {
            try {
                result.complete(policies.put(name, document));
            } catch (IOException e) {
                result.completeExceptionally(new ControlException(503, "storage-failed", "could not persist policy '"
                        + name + "' to " + dataDir + ": " + e.getMessage()));
            }
        });
        return result;
    }

    @Override
    public Runnable awaitPolicyChange(long revision, Consumer<Policies> waiter) {
        return policies.awaitChange(revision, waiter);
    }

    @Override
    public void close() {
        registry.close();
        policyWriters.close();
    }
}
