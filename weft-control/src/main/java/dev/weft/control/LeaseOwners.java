package dev.weft.control;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * Who owns each lease (docs/security.md, "Leases are owned"): the service of the sidecar that took it, or the
 * service its endpoints name. Renewing a lease, revoking it and binding an endpoint to it are allowed only to the
 * operator or to a caller proven to be of the lease's service (join token or signed request); anyone else gets 403
 * {@code not-lease-owner}, counted in {@code weft_control_refused_total}. Without this, a sidecar that learned another
 * service's lease id (from {@code GET /v1/leases}, say) could revoke it and take that service's endpoints down.
 *
 * <p>A sidecar's service is written into the store with its lease at grant ({@link ControlBackend#grantLease}: the
 * data dir's state file, or a key bound to the etcd lease), so ownership survives a restart of the control plane and
 * holds across control planes on one etcd. A cache sits in front, filled at grant and on a miss from one look-up of
 * the lease by its id ({@link ControlBackend#lease}), never a list of every lease. A lease with no recorded owner (the
 * operator took it, a sidecar on {@code etcd://} did, or a state file from before owners were recorded holds it)
 * belongs to the service its endpoints name: the one service of its endpoints, or only the operator when they name
 * several (only an operator's lease can). Such a lease with no endpoints yet is claimed by the first caller that binds
 * an endpoint to it (a claim kept in this cache only: once bound, the endpoint says the same to any control plane);
 * renewing or revoking it before that harms nobody, and is let through.
 *
 * <p>Thread: any (event loops and the store's threads); the cache is thread-safe and the rest immutable.
 */
final class LeaseOwners {
    /** The owner of a lease whose endpoints name several services: only the operator binds such a lease. */
    private static final String OPERATOR = "";
    /** Longer than any lease can live without a renewal ({@link RegistryState#MAX_TTL_MILLIS}), which reads it. */
    private static final Duration FORGET_AFTER = Duration.ofMillis(RegistryState.MAX_TTL_MILLIS).plusMinutes(5);
    private static final CompletableFuture<Void> ALLOWED = CompletableFuture.completedFuture(null);

    private final ControlBackend store;
    private final ApiCallers callers;
    private final Cache<String, String> owners = Caffeine.newBuilder().expireAfterAccess(FORGET_AFTER)
            .maximumSize(200_000).build();

    LeaseOwners(ControlBackend store, ApiCallers callers) {
        this.store = store;
        this.callers = callers;
    }

    /**
     * Puts the owner the store now holds for {@code leaseId} in front of it, so its first renewal reads nothing.
     *
     * @param owner the service of the sidecar that took it; null for the operator: such a lease belongs to the service
     *              its first endpoint is bound for (the operator registering for a service, or a test's fixture)
     */
    void granted(String leaseId, String owner) {
        if (owner != null) {
            owners.put(leaseId, owner);
        }
    }

    void revoked(String leaseId) {
        owners.invalidate(leaseId);
    }

    /**
     * Completes normally when {@code caller} may {@code action} lease {@code leaseId}; exceptionally with 403
     * {@code not-lease-owner} (counted) when not. An unknown lease passes, so that the store answers it 404.
     *
     * @param claim whether an unowned lease becomes the caller's (binding the first endpoint)
     */
    CompletableFuture<Void> check(ApiCallers.Caller caller, String leaseId, String action, boolean claim) {
        if (caller == null || caller.operator()) {
            return ALLOWED;
        }
        String owner = owners.getIfPresent(leaseId);
        if (owner != null) {
            return owner.equals(caller.service()) ? ALLOWED : CompletableFuture.failedFuture(refuse(owner,
                    caller, leaseId, action));
        }
        return store.lease(leaseId).thenApply(lease -> {
            String found = lease.map(LeaseOwners::ownerOf).orElse(null);
            if (found == null && claim && lease.isPresent()) {
                found = caller.service();
            }
            if (found == null) {
                return null;   // unknown (the store answers 404) or unowned and not claimed: nothing to protect
            }
            String settled = owners.asMap().merge(leaseId, found, (recorded, derived) -> recorded);
            if (!settled.equals(caller.service())) {
                throw refuse(settled, caller, leaseId, action);
            }
            return null;
        });
    }

    /**
     * The owner recorded at grant; else the service every endpoint of {@code lease} belongs to, the operator when
     * several, null when none.
     */
    private static String ownerOf(ControlBackend.LeaseInfo lease) {
        if (lease.owner() != null) {
            return lease.owner();
        }
        Set<String> services = new TreeSet<>();
        for (String endpoint : lease.endpoints()) {
            int slash = endpoint.indexOf('/');
            services.add(slash < 0 ? endpoint : endpoint.substring(0, slash));
        }
        return services.isEmpty() ? null : services.size() == 1 ? services.iterator().next() : OPERATOR;
    }

    private ControlException refuse(String owner, ApiCallers.Caller caller, String leaseId, String action) {
        callers.refused(ApiCallers.NOT_LEASE_OWNER);
        return new ControlException(403, ApiCallers.NOT_LEASE_OWNER, "a sidecar of service '" + caller.service()
                + "' (by its " + caller.proof() + ") may not " + action + " lease " + leaseId + ": it belongs to "
                + (owner.equals(OPERATOR) ? "the operator" : "service '" + owner + "'")
                + " (a sidecar renews, revokes and binds endpoints to its own service's leases only)");
    }
}
