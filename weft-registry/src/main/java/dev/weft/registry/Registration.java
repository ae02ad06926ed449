package dev.weft.registry;

import java.time.Duration;

/** A live registration. Closing it deregisters the endpoint (best effort) and stops its heartbeat. */
public interface Registration extends AutoCloseable {

    Endpoint endpoint();

    /** True once the registry has accepted the registration and the lease is believed alive. */
    boolean isRegistered();

    /** Waits until {@link #isRegistered()} or the timeout passes; returns whether it is registered. */
    boolean awaitRegistered(Duration timeout) throws InterruptedException;

    @Override
    void close();
}
