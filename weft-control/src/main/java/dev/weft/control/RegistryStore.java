package dev.weft.control;

import dev.weft.registry.Endpoint;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The registry's single writer: applies operations to {@link RegistryState}, persists each change before it is
 * acknowledged or announced, expires leases and pushes snapshots to watchers.
 *
 * <p>Threading: public methods may be called from any thread (event loops included) and never block; the work runs
 * on one platform thread, "weft-control-store", which owns the state, the file and the watcher sets. One thread
 * makes every operation atomic without locks, and it is where the fsync happens, so no event loop ever waits on
 * the disk.
 *
 * <p>Ordering guarantee: a watcher only ever sees a revision that is on disk. That is what lets a restarted control
 * plane trust the revision a reconnecting client reports.
 */
final class RegistryStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RegistryStore.class.getName());
    /** How soon the sweeper tries again to write a change the disk refused. */
    static final Duration SWEEP_INTERVAL = Duration.ofMillis(50);
    /**
     * The longest the sweeper sleeps when no lease is due sooner: a bound, so that a clock that jumps (tests move
     * theirs) is noticed within it. It used to wake every 50 ms whatever the leases: 20 wake-ups a second, about
     * 2.3 ms of CPU a second on an idle control plane on a 2-core VM (perf, session 26).
     */
    static final Duration MAX_SWEEP_WAIT = Duration.ofMillis(500);

    private final ScheduledThreadPoolExecutor thread;
    private final StateFile file;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final LongSupplier nanoClock;
    private final RegistryState state;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Set<ControlBackend.WatchSink>> watchers = new HashMap<>();
    // Services changed in memory but not yet announced, because their change is not on disk yet.
    private final Set<String> unannounced = new LinkedHashSet<>();
    private boolean dirty;
    // Written on the store thread, read by connectivity() on any thread.
    private final Failures failures = new Failures();
    /** Store thread: the next sweep, null while none is planned (or while it runs). */
    private ScheduledFuture<?> nextSweep;

    private static final class Failures {
        boolean connected = true;
        long count;
        String last;
    }

    private RegistryStore(StateFile file, FileChannel lockChannel, FileLock lock, LongSupplier nanoClock,
                          RegistryState state) {
        this.file = file;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.nanoClock = nanoClock;
        this.state = state;
        this.thread = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "weft-control-store");
            t.setDaemon(true);
            return t;
        });
        thread.setRemoveOnCancelPolicy(true);
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        thread.execute(this::planSweep);
    }

    /**
     * Opens (or creates) the data dir, takes its lock and restores the last persisted state.
     *
     * @throws IOException if the dir cannot be created, another control plane holds it, or the state is unreadable
     */
    static RegistryStore open(Path dataDir, LongSupplier nanoClock) throws IOException {
        Files.createDirectories(dataDir);
        Path lockPath = dataDir.resolve("lock");
        FileChannel lockChannel = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = lockChannel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            lockChannel.close();
            throw new IOException("data dir " + dataDir + " is in use by another control plane (lock held on "
                    + lockPath + "); give each control plane its own --data-dir");
        }
        try {
            StateFile file = new StateFile(dataDir);
            long now = nanoClock.getAsLong();
            RegistryState state = file.load().map(p -> RegistryState.restore(p, now)).orElseGet(RegistryState::new);
            return new RegistryStore(file, lockChannel, lock, nanoClock, state);
        } catch (IOException | RuntimeException e) {
            lock.release();
            lockChannel.close();
            throw e;
        }
    }

    Path stateFile() {
        return file.path();
    }

    // --- operations: callable from any thread, run on the store thread ---

    CompletableFuture<ControlBackend.LeaseGrant> grantLease(long ttlMillis) {
        return grantLease(ttlMillis, null);
    }

    /** @param owner the service of the sidecar taking it, or null; persisted with the lease (LeaseOwners reads it) */
    CompletableFuture<ControlBackend.LeaseGrant> grantLease(long ttlMillis, String owner) {
        return submit(() -> {
            RegistryState.checkTtl(ttlMillis);
            String id = newLeaseId();
            state.grantLease(id, ttlMillis, owner, nanoClock.getAsLong());
            planSweep(); // a short TTL may run out before the sweep planned
            commit();
            return new ControlBackend.LeaseGrant(id, ttlMillis);
        });
    }

    /** Not persisted: restored leases start with a full TTL anyway, so expiry times are not worth an fsync a second. */
    CompletableFuture<ControlBackend.KeepAlive> keepAlive(String leaseId) {
        return submit(() -> {
            int endpoints = state.keepAlive(leaseId, nanoClock.getAsLong());
            return new ControlBackend.KeepAlive(leaseId, state.ttlMillis(leaseId), endpoints);
        });
    }

    CompletableFuture<Void> revokeLease(String leaseId) {
        return submit(() -> {
            unannounced.addAll(state.revokeLease(leaseId));
            commit();
            return null;
        });
    }

    CompletableFuture<ControlBackend.ServiceSnapshot> putEndpoint(Endpoint endpoint, String leaseId) {
        return submit(() -> {
            RegistryState.PutResult result = state.putEndpoint(endpoint, leaseId, nanoClock.getAsLong());
            if (result == RegistryState.PutResult.CHANGED) {
                unannounced.add(endpoint.service());
            }
            if (result != RegistryState.PutResult.UNCHANGED) {
                commit();
            }
            return state.snapshot(endpoint.service());
        });
    }

    CompletableFuture<ControlBackend.ServiceSnapshot> deleteEndpoint(String service, String id) {
        return submit(() -> {
            if (!state.deleteEndpoint(service, id)) {
                String known = state.snapshot(service).endpoints().stream().map(Endpoint::id)
                        .collect(Collectors.joining(", "));
                throw new ControlException(404, "unknown-endpoint", "no endpoint '" + id + "' in service '"
                        + service + "' (known: " + (known.isEmpty() ? "none" : known) + ")");
            }
            unannounced.add(service);
            commit();
            return state.snapshot(service);
        });
    }

    CompletableFuture<ControlBackend.ServiceSnapshot> snapshot(String service) {
        return submit(() -> state.snapshot(service));
    }

    CompletableFuture<ControlBackend.ServiceList> services() {
        return submit(() -> new ControlBackend.ServiceList(state.revision(), state.services()));
    }

    CompletableFuture<List<ControlBackend.LeaseInfo>> leases() {
        return submit(() -> state.leases(nanoClock.getAsLong()));
    }

    CompletableFuture<Optional<ControlBackend.LeaseInfo>> lease(String leaseId) {
        return submit(() -> Optional.ofNullable(state.lease(leaseId, nanoClock.getAsLong())));
    }

    CompletableFuture<Long> revision() {
        return submit(state::revision);
    }

    CompletableFuture<ControlBackend.Counts> counts() {
        return submit(() -> new ControlBackend.Counts(state.revision(), state.services().size(),
                state.leases(nanoClock.getAsLong()).size(), watchers.values().stream().mapToInt(Set::size).sum()));
    }

    /** {@code connected} is false while a change waits in memory for the disk to take it. Any thread. */
    ControlBackend.Connectivity connectivity(String dataDir) {
        synchronized (failures) {
            return new ControlBackend.Connectivity("embedded", dataDir, failures.connected, failures.count,
                    failures.last);
        }
    }

    /**
     * Starts pushing snapshots of {@code service} to {@code sink}. The current one goes out at once if the watcher
     * has not seen it: no revision given, the service changed after {@code sinceRevision}, or {@code sinceRevision}
     * is from a history this store does not have (its data dir was replaced), in which case only a fresh snapshot is
     * safe.
     *
     * @param sinceRevision the last revision the watcher saw, or a negative number for none
     */
    CompletableFuture<Void> subscribe(String service, long sinceRevision, ControlBackend.WatchSink sink) {
        return submit(() -> {
            watchers.computeIfAbsent(service, s -> new LinkedHashSet<>()).add(sink);
            long current = state.serviceRevision(service);
            if (sinceRevision < 0 || current > sinceRevision || sinceRevision > state.revision()) {
                sink.send(ControlBackend.watchLine(state.snapshot(service)));
            }
            return null;
        });
    }

    void unsubscribe(String service, ControlBackend.WatchSink sink) {
        try {
            thread.execute(() -> {
                Set<ControlBackend.WatchSink> sinks = watchers.get(service);
                if (sinks != null && sinks.remove(sink) && sinks.isEmpty()) {
                    watchers.remove(service);
                }
            });
        } catch (RejectedExecutionException e) {
            // Closing: the watcher sets go away with the store.
        }
    }

    // --- store thread ---

    private <T> CompletableFuture<T> submit(Callable<T> op) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            thread.execute(() -> {
                try {
                    result.complete(op.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new ControlException(503, "shutting-down", "control plane is shutting down"));
        }
        return result;
    }

    /**
     * Plans the next sweep for when the first lease runs out, or {@link #MAX_SWEEP_WAIT} (a failed write: {@link
     * #SWEEP_INTERVAL}) if sooner, unless one is already planned by then. Called where those move earlier: after each
     * sweep, when a lease is granted, when a write fails; a renewal or a revocation only moves them later.
     */
    private void planSweep() {
        long wait = dirty || !unannounced.isEmpty() ? SWEEP_INTERVAL.toNanos() : MAX_SWEEP_WAIT.toNanos();
        long toExpiry = state.nanosToFirstExpiry(nanoClock.getAsLong());
        if (toExpiry >= 0) {
            wait = Math.min(wait, toExpiry);
        }
        if (nextSweep != null) {
            if (nextSweep.getDelay(TimeUnit.NANOSECONDS) <= wait) {
                return;
            }
            nextSweep.cancel(false);
        }
        try {
            nextSweep = thread.schedule(this::sweep, wait, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            nextSweep = null; // closing
        }
    }

    private void sweep() {
        nextSweep = null; // this one
        try {
            long now = nanoClock.getAsLong();
            if (state.hasExpired(now)) {
                Set<String> changed = state.expire(now);
                unannounced.addAll(changed);
                dirty = true;
            }
            if (dirty || !unannounced.isEmpty()) {
                commit();
            }
        } catch (ControlException e) {
            // commit() logged it; the next tick retries.
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "lease sweep failed", e);
        }
        planSweep();
    }

    /**
     * Writes the state, then tells watchers. If the write fails the change stays in memory, marked dirty; the caller
     * gets a 503 and retries (every mutating call is idempotent or harmless to repeat), and the sweeper keeps
     * retrying the write, announcing only once it succeeds.
     */
    private void commit() {
        dirty = true;
        try {
            file.save(state.toPersisted());
        } catch (IOException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot persist control plane state to " + file.path(), e);
            synchronized (failures) {
                failures.connected = false;
                failures.count++;
                failures.last = "cannot persist state to " + file.path() + ": " + e.getMessage();
            }
            planSweep(); // it retries the write
            throw new ControlException(503, "persistence-failed", "cannot persist state to " + file.path()
                    + ": " + e.getMessage() + " (the change is kept in memory and written when the disk recovers)");
        }
        dirty = false;
        synchronized (failures) {
            failures.connected = true;
        }
        if (unannounced.isEmpty()) {
            return;
        }
        for (String service : unannounced) {
            Set<ControlBackend.WatchSink> sinks = watchers.get(service);
            if (sinks == null || sinks.isEmpty()) {
                continue;
            }
            // One encoding shared by every watcher of the service; sinks never modify the array.
            byte[] line = ControlBackend.watchLine(state.snapshot(service));
            for (ControlBackend.WatchSink sink : sinks) {
                sink.send(line);
            }
        }
        unannounced.clear();
    }

    private String newLeaseId() {
        byte[] id = new byte[8];
        random.nextBytes(id);
        return HexFormat.of().formatHex(id);
    }

    /** Stops the store thread after the operations already queued, then frees the data dir for the next owner. */
    @Override
    public void close() {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(5, TimeUnit.SECONDS)) {
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot release data dir lock", e);
        }
    }
}
