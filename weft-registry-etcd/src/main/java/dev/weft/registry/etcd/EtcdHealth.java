package dev.weft.registry.etcd;

import dev.weft.registry.RegistryHealth;

import java.time.Instant;

/**
 * Connectivity as this client sees it, fed by the outcome of every etcd call and watch response. Thread safe: updated
 * from the registry's event thread, read by whoever asks for {@link dev.weft.registry.Registry#health()}.
 *
 * <p>{@code reconnects} counts recoveries: each time etcd answers again after the client had marked it unreachable.
 */
final class EtcdHealth {
    private final String target;
    private boolean connected;
    private boolean everConnected;
    private Instant lastContact;
    private long lastContactNanos;
    private String lastError;
    private long reconnects;

    EtcdHealth(String target) {
        this.target = target;
    }

    /** @return whether this is a recovery: etcd had been marked unreachable before */
    synchronized boolean success() {
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

    synchronized void failure(String error) {
        connected = false;
        lastError = error;
    }

    /** etcd answered, but refused (lease gone, permission denied...): it is reachable, the request was not. */
    synchronized void rejected(String error) {
        success();
        lastError = error;
    }

    synchronized boolean connectedWithin(long nanos) {
        return connected && System.nanoTime() - lastContactNanos < nanos;
    }

    synchronized boolean connected() {
        return connected;
    }

    synchronized RegistryHealth snapshot() {
        return new RegistryHealth("etcd", target, connected, lastContact, lastError, reconnects);
    }
}
