package dev.weft.registry;

import java.time.Duration;

/**
 * Where services register and discover each other. The data plane sees only this interface, so a backend
 * (embedded control plane, etcd) plugs in without touching it. Open one with {@link Registries#open(String)}.
 *
 * <p>Implementations are thread safe. Listener callbacks run on a registry-owned thread, never on a caller's
 * event loop, and must not block.
 */
public interface Registry extends AutoCloseable {

    /**
     * Registers an endpoint under a lease of the given TTL and keeps the lease alive by heartbeat until the
     * returned registration is closed. Returns at once: if the registry is unreachable the registration keeps
     * retrying with backoff in the background, and re-registers if the registry reports the lease lost.
     */
    Registration register(Endpoint endpoint, Duration ttl);

    /**
     * Watches one service. The listener receives the complete current endpoint list (a snapshot, not a delta)
     * first when it is known, then after every change, pushed by the registry (no polling). While the registry is
     * unreachable the listener is not called, so callers keep using the last list they got.
     */
    Watch watch(String service, EndpointListener listener);

    /**
     * Stores a policy document (routes, timeouts, retries, limits: YAML text, validated by the caller) under a name,
     * replacing the previous one. Every {@link #watchPolicies} listener receives it, typically within a second.
     *
     * @throws java.io.IOException when the registry refused or could not be reached; nothing was stored
     */
    void putPolicy(String name, String document) throws java.io.IOException;

    /**
     * Watches the policy documents. The listener receives all of them (name → text) first when known, then after
     * every change, pushed by the registry; while the registry is unreachable it is not called, so sidecars keep the
     * policies they have.
     */
    Watch watchPolicies(PolicyListener listener);

    /** Connectivity as seen by this client, for /ready, /config and /metrics. */
    RegistryHealth health();

    /** Stops heartbeats and watches. Does not deregister: close each {@link Registration} for that. */
    @Override
    void close();
}
