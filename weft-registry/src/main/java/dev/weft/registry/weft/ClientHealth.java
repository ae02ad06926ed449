package dev.weft.registry.weft;

import dev.weft.registry.RegistryHealth;

import java.time.Instant;

/**
 * Connectivity as this client sees it, fed by every call and watch line. Thread safe: updated from the registry's
 * event thread and HTTP callbacks, read by whoever asks for {@link dev.weft.registry.Registry#health()}.
 *
 * <p>{@code reconnects} counts recoveries: each time the control plane answers again after the client had marked
 * it unreachable.
 */
final class ClientHealth {
    private final String target;
    private boolean connected;
    private boolean everConnected;
    private Instant lastContact;
    private String lastError;
    private long reconnects;

    ClientHealth(String target) {
        this.target = target;
    }

    synchronized void success() {
        if (!connected && everConnected) {
            reconnects++;
        }
        connected = true;
        everConnected = true;
        lastContact = Instant.now();
    }

    synchronized void failure(String error) {
        connected = false;
        lastError = error;
    }

    /** The control plane answered, but refused: it is reachable, the request was wrong (or the lease is gone). */
    synchronized void rejected(String error) {
        success();
        lastError = error;
    }

    synchronized RegistryHealth snapshot() {
        return new RegistryHealth("weft", target, connected, lastContact, lastError, reconnects);
    }
}
