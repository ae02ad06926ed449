package dev.weft.registry.support;

import dev.weft.registry.RegistryHealth;

import java.time.Instant;

/**
 * Connectivity of one registry client as it sees it, fed by the outcome of every call and watch message, and read by
 * {@link dev.weft.registry.Registry#health()} (/ready, /config, /metrics). Shared by every backend so they report
 * alike. Thread safe: updated from the client's event thread and its transport's callbacks, read from anywhere.
 *
 * <p>{@code reconnects} counts recoveries: each time the registry answers again after the client had marked it
 * unreachable.
 */
public final class ConnectionHealth {
    private final String backend;
    private final String target;
    private boolean connected;
    private boolean everConnected;
    private Instant lastContact;
    private long lastContactNanos;
    private String lastError;
    private long reconnects;

    /**
     * @param backend "weft", "etcd" ...
     * @param target  what the client talks to, e.g. "127.0.0.1:7700"; never credentials
     */
    public ConnectionHealth(String backend, String target) {
        this.backend = backend;
        this.target = target;
    }

    /** The registry answered. @return whether this is a recovery: it had been marked unreachable before */
    public synchronized boolean success() {
        boolean recovered = !connected && everConnected;
        if (recovered) {
            reconnects++;
        }
        connected = true;
        everConnected = true;
        lastContact = Instant.now();
        lastContactNanos = System.nanoTime();
        return recovered;
    }

    /** The registry could not be reached (or could not decide, having no leader). */
    public synchronized void failure(String error) {
        connected = false;
        lastError = error;
    }

    /** The registry answered, but refused (lease gone, permission denied...): it is reachable, the request was not. */
    public synchronized void rejected(String error) {
        success();
        lastError = error;
    }

    /** Connected, and heard from within the last {@code nanos}. */
    public synchronized boolean connectedWithin(long nanos) {
        return connected && System.nanoTime() - lastContactNanos < nanos;
    }

    public synchronized boolean connected() {
        return connected;
    }

    public synchronized RegistryHealth snapshot() {
        return new RegistryHealth(backend, target, connected, lastContact, lastError, reconnects);
    }
}
