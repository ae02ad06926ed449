package dev.weft.registry.etcd;

import dev.weft.control.ControlBackend;
import dev.weft.control.ControlException;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Watch;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The control plane's API kept in etcd ({@code ./weft control --registry etcd://...}): each operation of the
 * {@code weft://} API maps onto the same keys and leases an {@code etcd://} sidecar uses ({@link KeyLayout}), so a
 * sidecar registered through the control plane and one registered in etcd directly are indistinguishable, and
 * {@code etcdctl get --prefix /weft/v1/} shows what {@code GET /v1/services} does.
 *
 * <ul>
 *   <li>A lease is an etcd lease (TTL rounded up to whole seconds); its id is the etcd lease id in hex. The service
 *       of the sidecar that took it is a key bound to the same lease ({@link KeyLayout#leaseOwnerKey}), so it is
 *       gone with the lease and every control plane on this etcd reads the same owner, by the lease's id.</li>
 *   <li>PUT endpoint is a put of the endpoint's key bound to that lease; keepalive is one etcd keep-alive.</li>
 *   <li>A watch stream is fed by the shared etcd watch of the service ({@link ServiceWatch}), its revisions are etcd
 *       revisions; a watcher always gets the current list first (the client drops a list it already has).</li>
 *   <li>Policies are the keys under {@code ROOT/v1/policies/}, mirrored here by a {@link PolicyWatch} for the long
 *       poll; the mirror's revision is the etcd revision of the last change.</li>
 * </ul>
 *
 * <p>The control plane holds no state of its own (lease owners included): it can restart, or several can serve the
 * same etcd, and sidecars see no difference. Failures: an operation etcd could not take completes with 503
 * "registry-unavailable" naming etcd and the cause (counted in {@link #connectivity()}, hence {@code /metrics}); one
 * it refused with 404 "unknown-lease" (lease expired) or 502 "registry-refused" (permissions, for instance).
 *
 * <p>Threading: every method returns at once; jetcd completes the futures on its own threads, and watch and policy
 * deliveries come from the {@link EtcdRegistry}'s event thread and the policy watch's virtual thread. The only state
 * here is the policy mirror (guarded by {@code this}) and the map of watch streams (concurrent).
 */
final class EtcdControlBackend implements ControlBackend {
    private static final long MIN_TTL_MILLIS = EtcdRegistry.MIN_TTL.toMillis();
    private static final long MAX_TTL_MILLIS = EtcdRegistry.MAX_TTL.toMillis();

    private final EtcdRegistry etcd;
    private final Map<WatchSink, Watch> streams = new ConcurrentHashMap<>();
    private final AtomicLong errors = new AtomicLong();
    private volatile String lastError;
    // Policy mirror, guarded by this.
    private Policies policies;
    private final List<Consumer<Policies>> policyWaiters = new ArrayList<>();
    private PolicyWatch policyWatch;

    private EtcdControlBackend(EtcdRegistry etcd) {
        this.etcd = etcd;
    }

    /**
     * Connects, and waits until etcd answers a quorum read and the policies are listed, or {@code timeout} passes.
     *
     * @throws IOException naming the members and the last failure (unreachable, TLS, credentials)
     */
    static EtcdControlBackend open(EtcdSettings settings, Duration timeout) throws IOException {
        EtcdRegistry etcd = new EtcdRegistry(settings);
        EtcdControlBackend backend = new EtcdControlBackend(etcd);
        long deadline = System.nanoTime() + timeout.toNanos();
        ByteSequence policies = etcd.keys.policiesPrefix();
        while (true) {
            try {
                GetResponse listed = etcd.call(() -> etcd.client().getKVClient()
                        .get(policies, GetOption.builder().isPrefix(true).build())).get();
                backend.offerPolicies(listed.getHeader().getRevision(), PolicyWatch.documents(policies, listed));
                break;
            } catch (InterruptedException e) {
                etcd.close();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while connecting to etcd " + settings.target(), e);
            } catch (ExecutionException e) {
                if (System.nanoTime() - deadline >= 0) {
                    etcd.close();
                    // Names the members, the call and the cause, with a hint for TLS, credentials or a refused dial.
                    throw new IOException(etcd.describe("list " + etcd.keys.root() + "/v1/policies/", e)
                            + "; gave up after " + timeout.toMillis() + " ms", EtcdRegistry.unwrap(e));
                }
                try {
                    Thread.sleep(250);
                } catch (InterruptedException ie) {
                    etcd.close();
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while connecting to etcd " + settings.target(), ie);
                }
            }
        }
        synchronized (backend) {
            backend.policyWatch = new PolicyWatch(etcd, backend::offerPolicies);
        }
        return backend;
    }

    // --- leases and endpoints ---

    /**
     * Grants the etcd lease, then puts the owner's key bound to it. Two calls, not atomic (a grant is no KV operation
     * a transaction could hold): when the owner's key cannot be written the lease is revoked (best effort) and the
     * grant fails, so no sidecar holds a lease whose owner is not recorded.
     */
    @Override
    public CompletableFuture<LeaseGrant> grantLease(long ttlMillis, String owner) {
        if (ttlMillis < MIN_TTL_MILLIS || ttlMillis > MAX_TTL_MILLIS) {
            return CompletableFuture.failedFuture(ControlException.badRequest("ttlMillis out of range: " + ttlMillis
                    + " (expected " + MIN_TTL_MILLIS + ".." + MAX_TTL_MILLIS + ")"));
        }
        long seconds = Math.max(1, (ttlMillis + 999) / 1000);
        return call("grant lease", () -> etcd.client().getLeaseClient().grant(seconds)).thenCompose(g -> {
            LeaseGrant granted = new LeaseGrant(KeyLayout.leaseId(g.getID()), TimeUnit.SECONDS.toMillis(g.getTTL()));
            if (owner == null) {
                return CompletableFuture.completedFuture(granted);
            }
            return call("record the owner of lease " + granted.leaseId(), () -> etcd.client().getKVClient()
                    .put(etcd.keys.leaseOwnerKey(granted.leaseId()), bytes(owner),
                            PutOption.builder().withLeaseId(g.getID()).build()), granted.leaseId())
                    .whenComplete((put, error) -> {
                        if (error != null) {
                            etcd.call(() -> etcd.client().getLeaseClient().revoke(g.getID()));
                        }
                    })
                    .thenApply(put -> granted);
        });
    }

    @Override
    public CompletableFuture<KeepAlive> keepAlive(String leaseId) {
        return onLease(leaseId, id -> call("renew lease " + leaseId,
                () -> etcd.client().getLeaseClient().keepAliveOnce(id), leaseId)
                .thenCompose(renewed -> call("read lease " + leaseId, () -> etcd.client().getLeaseClient()
                        .timeToLive(id, LeaseOption.builder().withAttachedKeys().build()), leaseId))
                .thenApply(ttl -> {
                    if (ttl.getTTL() <= 0) {
                        throw ControlException.unknownLease(leaseId);
                    }
                    return new KeepAlive(leaseId, TimeUnit.SECONDS.toMillis(ttl.getGrantedTTL()),
                            etcd.keys.endpointNames(ttl.getKeys()).size());
                }));
    }

    @Override
    public CompletableFuture<Void> revokeLease(String leaseId) {
        return onLease(leaseId, id -> call("revoke lease " + leaseId,
                () -> etcd.client().getLeaseClient().revoke(id), leaseId).thenApply(r -> null));
    }

    @Override
    public CompletableFuture<ServiceSnapshot> putEndpoint(Endpoint endpoint, String leaseId) {
        try {
            KeyLayout.checkEndpoint(endpoint);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(ControlException.badRequest(e.getMessage()));
        }
        return onLease(leaseId, id -> call("register " + endpoint.service() + "/" + endpoint.id(),
                () -> etcd.client().getKVClient().put(etcd.keys.endpointKey(endpoint), KeyLayout.encode(endpoint),
                        PutOption.builder().withLeaseId(id).build()), leaseId)
                .thenCompose(put -> snapshot(endpoint.service())));
    }

    @Override
    public CompletableFuture<ServiceSnapshot> deleteEndpoint(String service, String id) {
        String name = service + "/" + id;
        return call("deregister " + name, () -> etcd.client().getKVClient()
                .delete(bytes(etcd.keys.servicesPrefix() + name)))
                .thenCompose(deleted -> snapshot(service).thenApply(s -> {
                    if (deleted.getDeleted() == 0) {
                        List<String> known = s.endpoints().stream().map(Endpoint::id).toList();
                        throw new ControlException(404, "unknown-endpoint", "no endpoint '" + id + "' in service '"
                                + service + "' (known: " + (known.isEmpty() ? "none" : String.join(", ", known))
                                + ")");
                    }
                    return s;
                }));
    }

    @Override
    public CompletableFuture<ServiceSnapshot> snapshot(String service) {
        ByteSequence prefix = etcd.keys.servicePrefix(service);
        return call("list " + service, () -> etcd.client().getKVClient()
                .get(prefix, GetOption.builder().isPrefix(true).build()))
                .thenApply(listed -> {
                    SortedMap<String, Endpoint> endpoints = new TreeMap<>();
                    for (KeyValue kv : listed.getKvs()) {
                        String id = KeyLayout.idOf(prefix, kv.getKey());
                        if (id == null) {
                            continue;
                        }
                        try {
                            endpoints.put(id, KeyLayout.decode(service, id, kv.getValue()));
                        } catch (IOException e) {
                            // Skipped as the sidecars' watch skips it: no endpoint to send traffic to.
                        }
                    }
                    return new ServiceSnapshot(service, listed.getHeader().getRevision(),
                            List.copyOf(endpoints.values()));
                });
    }

    @Override
    public CompletableFuture<ServiceList> services() {
        return listServices().thenApply(listed -> {
            SortedMap<String, long[]> byService = new TreeMap<>();   // name → {endpoints, revision}
            for (KeyValue kv : listed.getKvs()) {
                String name = etcd.keys.endpointName(kv.getKey());
                if (name != null) {
                    long[] s = byService.computeIfAbsent(name.substring(0, name.indexOf('/')), n -> new long[2]);
                    s[0]++;
                    s[1] = Math.max(s[1], kv.getModRevision());
                }
            }
            List<ServiceSummary> out = new ArrayList<>();
            byService.forEach((name, s) -> out.add(new ServiceSummary(name, (int) s[0], s[1])));
            return new ServiceList(listed.getHeader().getRevision(), out);
        });
    }

    /**
     * The leases that hold endpoints (etcd 3.4 cannot list leases through jetcd, so a lease granted but not yet
     * bound to an endpoint is not shown), with their owners. One etcd call per lease, and one for the owners: an
     * operator's command, not a hot path.
     */
    @Override
    public CompletableFuture<List<LeaseInfo>> leases() {
        CompletableFuture<Map<String, String>> owners = call("list lease owners", () -> etcd.client().getKVClient()
                .get(etcd.keys.leasesPrefix(), GetOption.builder().isPrefix(true).build())).thenApply(listed -> {
                    Map<String, String> byLease = new HashMap<>();
                    for (KeyValue kv : listed.getKvs()) {
                        byLease.put(kv.getKey().substring(etcd.keys.leasesPrefix().size())
                                .toString(StandardCharsets.UTF_8), KeyLayout.ownerOf(kv.getValue()));
                    }
                    return byLease;
                });
        return listServices().thenCompose(listed -> {
            Set<Long> ids = new TreeSet<>();
            for (KeyValue kv : listed.getKvs()) {
                if (kv.getLease() != 0 && etcd.keys.endpointName(kv.getKey()) != null) {
                    ids.add(kv.getLease());
                }
            }
            List<CompletableFuture<LeaseInfo>> each = new ArrayList<>();
            for (long id : ids) {
                String name = KeyLayout.leaseId(id);
                each.add(call("read lease " + name, () -> etcd.client().getLeaseClient()
                        .timeToLive(id, LeaseOption.builder().withAttachedKeys().build()))
                        .thenCombine(owners, (t, byLease) -> new LeaseInfo(name,
                                TimeUnit.SECONDS.toMillis(t.getGrantedTTL()),
                                TimeUnit.SECONDS.toMillis(Math.max(0, t.getTTL())),
                                etcd.keys.endpointNames(t.getKeys()), byLease.get(name))));
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                    .map(CompletableFuture::join).filter(l -> !l.endpoints().isEmpty())
                    .sorted((a, b) -> a.id().compareTo(b.id())).toList());
        });
    }

    /**
     * One lease by its id: its time to live with the keys bound to it, and its owner's key, read side by side (two
     * calls whatever the number of leases; no list). A lease with no endpoints is found too, unlike in
     * {@link #leases()}.
     */
    @Override
    public CompletableFuture<Optional<LeaseInfo>> lease(String leaseId) {
        return onLease(leaseId, id -> {
            String name = KeyLayout.leaseId(id);
            CompletableFuture<io.etcd.jetcd.lease.LeaseTimeToLiveResponse> ttl = call("read lease " + name,
                    () -> etcd.client().getLeaseClient().timeToLive(id,
                            LeaseOption.builder().withAttachedKeys().build()), name);
            CompletableFuture<GetResponse> owner = call("read the owner of lease " + name,
                    () -> etcd.client().getKVClient().get(etcd.keys.leaseOwnerKey(name)));
            return ttl.thenCombine(owner, (t, o) -> t.getTTL() <= 0 ? Optional.<LeaseInfo>empty()
                    : Optional.of(new LeaseInfo(name, TimeUnit.SECONDS.toMillis(t.getGrantedTTL()),
                            TimeUnit.SECONDS.toMillis(t.getTTL()), etcd.keys.endpointNames(t.getKeys()),
                            o.getKvs().isEmpty() ? null : KeyLayout.ownerOf(o.getKvs().getFirst().getValue()))));
        }).exceptionallyCompose(e -> EtcdRegistry.unwrap(e) instanceof ControlException ce
                && ce.code().equals("unknown-lease") ? CompletableFuture.completedFuture(Optional.empty())
                : CompletableFuture.failedFuture(EtcdRegistry.unwrap(e)));
    }

    @Override
    public CompletableFuture<Counts> counts() {
        return listServices().thenApply(listed -> {
            Set<String> services = new HashSet<>();
            Set<Long> leases = new HashSet<>();
            for (KeyValue kv : listed.getKvs()) {
                String name = etcd.keys.endpointName(kv.getKey());
                if (name != null) {
                    services.add(name.substring(0, name.indexOf('/')));
                    if (kv.getLease() != 0) {
                        leases.add(kv.getLease());
                    }
                }
            }
            return new Counts(listed.getHeader().getRevision(), services.size(), leases.size(), streams.size());
        });
    }

    @Override
    public Connectivity connectivity() {
        return new Connectivity("etcd", etcd.settings.target(), etcd.health.connected(), errors.get(), lastError);
    }

    // --- watches ---

    /**
     * Feeds the stream from the shared etcd watch of the service. The current list goes out first whatever
     * {@code sinceRevision} says: etcd revisions count every change in the cluster, so whether this service changed
     * after it is not known without a list anyway, and the client ignores a list equal to the one it has.
     */
    @Override
    public CompletableFuture<Void> subscribe(String service, long sinceRevision, WatchSink sink) {
        ServiceWatch.RevisionListener listener = (s, revision, endpoints) ->
                sink.send(ControlBackend.watchLine(new ServiceSnapshot(s, revision, endpoints)));
        try {
            streams.put(sink, etcd.watch(service, listener));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(ControlException.badRequest(e.getMessage()));
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void unsubscribe(String service, WatchSink sink) {
        Watch watch = streams.remove(sink);
        if (watch != null) {
            watch.close();
        }
    }

    // --- policies ---

    @Override
    public CompletableFuture<Policies> policies() {
        return refreshPolicies();
    }

    @Override
    public CompletableFuture<Policies> putPolicy(String name, String document) {
        ByteSequence key = etcd.keys.policyKey(name);
        CompletableFuture<?> change = document == null
                ? call("delete policy " + name, () -> etcd.client().getKVClient().delete(key))
                : call("put policy " + name, () -> etcd.client().getKVClient()
                        .put(key, ByteSequence.from(document, StandardCharsets.UTF_8)));
        // Listed again rather than patched in: the answer is exactly what etcd holds, writes by others included.
        return change.thenCompose(done -> refreshPolicies());
    }

    @Override
    public Runnable awaitPolicyChange(long revision, Consumer<Policies> waiter) {
        Policies now;
        synchronized (this) {
            if (policies == null || policies.revision() == revision) {
                policyWaiters.add(waiter);
                return () -> {
                    synchronized (this) {
                        policyWaiters.remove(waiter);
                    }
                };
            }
            now = policies;
        }
        waiter.accept(now);
        return () -> {};
    }

    /** Lists the policies and offers them to the mirror; answers the mirror as it then stands. */
    private CompletableFuture<Policies> refreshPolicies() {
        ByteSequence prefix = etcd.keys.policiesPrefix();
        return call("list policies", () -> etcd.client().getKVClient()
                .get(prefix, GetOption.builder().isPrefix(true).build()))
                .thenApply(listed -> offerPolicies(listed.getHeader().getRevision(),
                        PolicyWatch.documents(prefix, listed)));
    }

    /**
     * Takes a list of the policies (from the watch or a refresh) if it is newer and different, and wakes the long
     * polls. The revision stays that of the last change, so a poll waits until the documents really change.
     */
    private Policies offerPolicies(long revision, Map<String, String> documents) {
        List<Consumer<Policies>> wake;
        Policies current;
        synchronized (this) {
            if (policies != null && (policies.policies().equals(documents) || revision <= policies.revision())) {
                return policies;
            }
            policies = new Policies(revision, Map.copyOf(documents));
            current = policies;
            wake = new ArrayList<>(policyWaiters);
            policyWaiters.clear();
        }
        wake.forEach(w -> w.accept(current));
        return current;
    }

    @Override
    public void close() {
        PolicyWatch watch;
        synchronized (this) {
            watch = policyWatch;
            policyWatch = null;
        }
        if (watch != null) {
            watch.close();
        }
        streams.values().forEach(Watch::close);
        streams.clear();
        etcd.close();
    }

    // --- plumbing ---

    private CompletableFuture<GetResponse> listServices() {
        return call("list services", () -> etcd.client().getKVClient()
                .get(bytes(etcd.keys.servicesPrefix()), GetOption.builder().isPrefix(true).withKeysOnly(true).build()));
    }

    private <T> CompletableFuture<T> call(String what, Supplier<CompletableFuture<T>> op) {
        return call(what, op, null);
    }

    /**
     * One etcd call, its failure turned into the API's answer. {@code leaseId}, when the call names a lease, turns
     * etcd's "lease not found" into 404 unknown-lease: the client then takes a new lease, as with the embedded store.
     */
    private <T> CompletableFuture<T> call(String what, Supplier<CompletableFuture<T>> op, String leaseId) {
        return etcd.call(op).handle((value, error) -> {
            if (error == null) {
                etcd.onEvents(etcd::contact);
                return value;
            }
            throw translate(what, error, leaseId);
        });
    }

    private ControlException translate(String what, Throwable error, String leaseId) {
        Throwable cause = EtcdRegistry.unwrap(error);
        if (cause instanceof ControlException ce) {
            return ce;
        }
        etcd.failed(what, cause);
        if (leaseId != null && EtcdRegistry.leaseNotFound(cause)) {
            return ControlException.unknownLease(leaseId);
        }
        String text = etcd.describe(what, cause);
        if (EtcdRegistry.unreachable(cause)) {
            errors.incrementAndGet();
            lastError = text;
            // Not "nothing was changed": a write whose answer timed out may still have been applied.
            return new ControlException(503, "registry-unavailable", text + "; retry when etcd answers");
        }
        return new ControlException(502, "registry-refused", text);
    }

    /** Runs {@code op} with the etcd lease id of {@code hex}; 404 unknown-lease if no lease can have that id. */
    private static <T> CompletableFuture<T> onLease(String hex, LongFunction<CompletableFuture<T>> op) {
        if (hex == null || hex.length() != 16 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)
                || HexFormat.fromHexDigitsToLong(hex) <= 0) {
            return CompletableFuture.failedFuture(ControlException.unknownLease(hex));
        }
        return op.apply(HexFormat.fromHexDigitsToLong(hex));
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "EtcdControlBackend[" + etcd.settings + "]";
    }
}
