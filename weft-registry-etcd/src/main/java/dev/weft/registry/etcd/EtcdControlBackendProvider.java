package dev.weft.registry.etcd;

import dev.weft.control.ControlBackend;
import dev.weft.control.ControlBackendProvider;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;

/**
 * Puts the control plane on etcd ({@code ./weft control --registry etcd://...}); the URL takes the same options as a
 * sidecar's ({@link EtcdSettings}: members, TLS, user/password, prefix).
 */
public final class EtcdControlBackendProvider implements ControlBackendProvider {
    @Override
    public String scheme() {
        return "etcd";
    }

    @Override
    public ControlBackend open(URI uri, Duration connectTimeout) throws IOException {
        return EtcdControlBackend.open(EtcdSettings.parse(uri), connectTimeout);
    }
}
