package dev.weft.control;

import dev.weft.registry.Endpoint;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The registry's data and rules: leases, the endpoints bound to them, and revisions. No I/O and no clock of its own
 * (callers pass {@code nowNanos}), so the rules are unit-testable without waiting.
 *
 * <p>Not thread safe: {@link RegistryStore} confines it to the store thread.
 *
 * <p>Revisions: one counter for the whole registry, bumped by every change of any service's endpoint list; each
 * service remembers the revision of its last change. A watcher that has seen revision N of a service needs a new
 * snapshot exactly when the service's revision is above N. The counter is persisted, so it only ever grows.
 */
final class RegistryState {
    static final long MIN_TTL_MILLIS = 100;
    static final long MAX_TTL_MILLIS = TimeUnit.MINUTES.toMillis(10);

    private long revision;
    private final Map<String, Lease> leases = new HashMap<>();
    private final SortedMap<String, ServiceEntry> services = new TreeMap<>();

    record EndpointKey(String service, String id) {}

    /** What a PUT of an endpoint did: nothing, only moved it to another lease (persist, nobody to tell), or changed the list. */
    enum PutResult { UNCHANGED, REBOUND, CHANGED }

    private static final class Lease {
        final String id;
        final long ttlMillis;
        /** The service of the sidecar that took it; null for the operator's, or one restored from an older file. */
        final String owner;
        long expiresAtNanos;
        // Insertion ordered so listings read in registration order.
        final Set<EndpointKey> endpoints = new LinkedHashSet<>();

        Lease(String id, long ttlMillis, String owner, long expiresAtNanos) {
            this.id = id;
            this.ttlMillis = ttlMillis;
            this.owner = owner;
            this.expiresAtNanos = expiresAtNanos;
        }

        boolean expired(long nowNanos) {
            return nowNanos - expiresAtNanos >= 0;
        }
    }

    private record Bound(Endpoint endpoint, String leaseId) {}

    private static final class ServiceEntry {
        long revision;
        // Sorted by id so snapshots are deterministic and clients can compare them with equals().
        final SortedMap<String, Bound> endpoints = new TreeMap<>();
    }

    long revision() {
        return revision;
    }

    static void checkTtl(long ttlMillis) {
        if (ttlMillis < MIN_TTL_MILLIS || ttlMillis > MAX_TTL_MILLIS) {
            throw ControlException.badRequest("ttlMillis out of range: " + ttlMillis + " (expected "
                    + MIN_TTL_MILLIS + ".." + MAX_TTL_MILLIS + ")");
        }
    }

    void grantLease(String id, long ttlMillis, long nowNanos) {
        grantLease(id, ttlMillis, null, nowNanos);
    }

    /** @param owner the service of the sidecar taking the lease, or null (the operator) */
    void grantLease(String id, long ttlMillis, String owner, long nowNanos) {
        checkTtl(ttlMillis);
        if (leases.containsKey(id)) {
            throw new IllegalStateException("duplicate lease id " + id);
        }
        leases.put(id, new Lease(id, ttlMillis, owner, nowNanos + TimeUnit.MILLISECONDS.toNanos(ttlMillis)));
    }

    /**
     * Extends a lease by its full TTL. A lease past its expiry that the sweeper has not removed yet is treated as
     * gone: answering 200 would tell the client its endpoints are live while they are about to vanish.
     *
     * @return how many endpoints are bound to the lease, so a client can notice its endpoint went missing
     */
    int keepAlive(String id, long nowNanos) {
        Lease lease = liveLease(id, nowNanos);
        lease.expiresAtNanos = nowNanos + TimeUnit.MILLISECONDS.toNanos(lease.ttlMillis);
        return lease.endpoints.size();
    }

    long ttlMillis(String leaseId) {
        Lease lease = leases.get(leaseId);
        if (lease == null) {
            throw ControlException.unknownLease(leaseId);
        }
        return lease.ttlMillis;
    }

    /** Removes a lease and every endpoint still bound to it; returns the services that changed. */
    Set<String> revokeLease(String id) {
        Lease lease = leases.remove(id);
        if (lease == null) {
            throw ControlException.unknownLease(id);
        }
        return removeBoundEndpoints(List.of(lease));
    }

    /**
     * Binds an endpoint to a live lease, replacing any endpoint with the same id (a restarted instance takes its id
     * over with its new lease). Writing exactly what is there already is not a change, so retried PUTs do not wake
     * every watcher.
     *
     */
    PutResult putEndpoint(Endpoint endpoint, String leaseId, long nowNanos) {
        Lease lease = liveLease(leaseId, nowNanos);
        ServiceEntry entry = services.computeIfAbsent(endpoint.service(), s -> new ServiceEntry());
        EndpointKey key = new EndpointKey(endpoint.service(), endpoint.id());
        Bound previous = entry.endpoints.get(endpoint.id());
        if (previous != null && previous.endpoint().equals(endpoint) && previous.leaseId().equals(leaseId)) {
            return PutResult.UNCHANGED;
        }
        if (previous != null && !previous.leaseId().equals(leaseId)) {
            Lease old = leases.get(previous.leaseId());
            if (old != null) {
                old.endpoints.remove(key);
            }
        }
        lease.endpoints.add(key);
        entry.endpoints.put(endpoint.id(), new Bound(endpoint, leaseId));
        boolean listChanged = previous == null || !previous.endpoint().equals(endpoint);
        if (!listChanged) {
            return PutResult.REBOUND;
        }
        entry.revision = ++revision;
        return PutResult.CHANGED;
    }

    /** @return whether the endpoint existed */
    boolean deleteEndpoint(String service, String id) {
        ServiceEntry entry = services.get(service);
        Bound bound = entry == null ? null : entry.endpoints.remove(id);
        if (bound == null) {
            return false;
        }
        Lease lease = leases.get(bound.leaseId());
        if (lease != null) {
            lease.endpoints.remove(new EndpointKey(service, id));
        }
        entry.revision = ++revision;
        return true;
    }

    /** Removes every lease whose TTL ran out, with its endpoints; returns the services that changed. */
    Set<String> expire(long nowNanos) {
        List<Lease> expired = new ArrayList<>();
        for (Lease lease : leases.values()) {
            if (lease.expired(nowNanos)) {
                expired.add(lease);
            }
        }
        if (expired.isEmpty()) {
            return Set.of();
        }
        expired.forEach(l -> leases.remove(l.id));
        return removeBoundEndpoints(expired);
    }

    /**
     * Nanoseconds from {@code nowNanos} until the first lease runs out, 0 when one already has, or -1 when there is no
     * lease: when the sweeper next has something to do.
     */
    long nanosToFirstExpiry(long nowNanos) {
        long first = -1;
        for (Lease lease : leases.values()) {
            long left = Math.max(0, lease.expiresAtNanos - nowNanos);
            if (first < 0 || left < first) {
                first = left;
            }
        }
        return first;
    }

    /** True if something expires by {@code nowNanos}; lets the sweeper skip the scan's allocation on idle ticks. */
    boolean hasExpired(long nowNanos) {
        for (Lease lease : leases.values()) {
            if (lease.expired(nowNanos)) {
                return true;
            }
        }
        return false;
    }

    private Set<String> removeBoundEndpoints(List<Lease> gone) {
        Set<String> changed = new HashSet<>();
        for (Lease lease : gone) {
            for (EndpointKey key : lease.endpoints) {
                ServiceEntry entry = services.get(key.service());
                if (entry != null && entry.endpoints.remove(key.id()) != null) {
                    changed.add(key.service());
                }
            }
        }
        if (!changed.isEmpty()) {
            // One bump for the whole batch: the services changed together, in one persisted step.
            long rev = ++revision;
            changed.forEach(s -> services.get(s).revision = rev);
        }
        return changed;
    }

    private Lease liveLease(String id, long nowNanos) {
        Lease lease = leases.get(id);
        if (lease == null || lease.expired(nowNanos)) {
            throw ControlException.unknownLease(id);
        }
        return lease;
    }

    /** The service's current list; a service never seen has revision 0 and no endpoints. */
    ControlBackend.ServiceSnapshot snapshot(String service) {
        ServiceEntry entry = services.get(service);
        if (entry == null) {
            return new ControlBackend.ServiceSnapshot(service, 0, List.of());
        }
        return new ControlBackend.ServiceSnapshot(service, entry.revision,
                entry.endpoints.values().stream().map(Bound::endpoint).toList());
    }

    long serviceRevision(String service) {
        ServiceEntry entry = services.get(service);
        return entry == null ? 0 : entry.revision;
    }

    List<ControlBackend.ServiceSummary> services() {
        List<ControlBackend.ServiceSummary> out = new ArrayList<>();
        services.forEach((name, e) -> out.add(new ControlBackend.ServiceSummary(name, e.endpoints.size(), e.revision)));
        return out;
    }

    List<ControlBackend.LeaseInfo> leases(long nowNanos) {
        List<ControlBackend.LeaseInfo> out = new ArrayList<>();
        for (Lease lease : leases.values()) {
            out.add(info(lease, nowNanos));
        }
        out.sort((a, b) -> a.id().compareTo(b.id()));
        return out;
    }

    /** The live lease with this id, or null (unknown, or past its expiry and not swept yet). */
    ControlBackend.LeaseInfo lease(String id, long nowNanos) {
        Lease lease = leases.get(id);
        return lease == null || lease.expired(nowNanos) ? null : info(lease, nowNanos);
    }

    private static ControlBackend.LeaseInfo info(Lease lease, long nowNanos) {
        long remaining = Math.max(0, TimeUnit.NANOSECONDS.toMillis(lease.expiresAtNanos - nowNanos));
        return new ControlBackend.LeaseInfo(lease.id, lease.ttlMillis, remaining,
                lease.endpoints.stream().map(k -> k.service() + "/" + k.id()).toList(), lease.owner);
    }

    // --- persistence ---

    StateFile.Persisted toPersisted() {
        List<StateFile.PersistedLease> ls = new ArrayList<>();
        leases.values().forEach(l -> ls.add(new StateFile.PersistedLease(l.id, l.ttlMillis, l.owner)));
        ls.sort((a, b) -> a.id().compareTo(b.id()));
        List<StateFile.PersistedService> ss = new ArrayList<>();
        services.forEach((name, e) -> ss.add(new StateFile.PersistedService(name, e.revision,
                e.endpoints.values().stream()
                        .map(b -> new StateFile.PersistedEndpoint(b.endpoint(), b.leaseId())).toList())));
        return new StateFile.Persisted(StateFile.FORMAT, revision, ls, ss);
    }

    /**
     * Rebuilds the state written by {@link #toPersisted()}. Every lease restarts with its full TTL: time spent down
     * is not the instances' fault, and their keepalives resume with the same lease ids.
     */
    static RegistryState restore(StateFile.Persisted persisted, long nowNanos) {
        RegistryState state = new RegistryState();
        state.revision = persisted.revision();
        for (StateFile.PersistedLease l : persisted.leases()) {
            // A file written before owners were recorded has none: such a lease belongs to its endpoints' service.
            state.leases.put(l.id(), new Lease(l.id(), l.ttlMillis(), l.owner(),
                    nowNanos + TimeUnit.MILLISECONDS.toNanos(l.ttlMillis())));
        }
        for (StateFile.PersistedService s : persisted.services()) {
            ServiceEntry entry = new ServiceEntry();
            entry.revision = s.revision();
            state.revision = Math.max(state.revision, s.revision());
            for (StateFile.PersistedEndpoint pe : s.endpoints()) {
                Lease lease = state.leases.get(pe.leaseId());
                // An endpoint without its lease would never expire; the file is written atomically, so this only
                // happens after hand edits.
                if (lease == null || !pe.endpoint().service().equals(s.name())) {
                    continue;
                }
                lease.endpoints.add(new EndpointKey(s.name(), pe.endpoint().id()));
                entry.endpoints.put(pe.endpoint().id(), new Bound(pe.endpoint(), pe.leaseId()));
            }
            state.services.put(s.name(), entry);
        }
        return state;
    }
}
