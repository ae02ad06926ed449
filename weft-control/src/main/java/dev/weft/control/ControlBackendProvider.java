package dev.weft.control;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Factory for an external control plane store, found with {@link ServiceLoader} by the scheme of
 * {@code ./weft control --registry URL}: a backend module lists its provider in
 * META-INF/services/dev.weft.control.ControlBackendProvider (weft-registry-etcd provides {@code etcd}).
 */
public interface ControlBackendProvider {
    /** URL scheme this provider handles, e.g. "etcd". */
    String scheme();

    /**
     * Connects and checks that the store answers, so a control plane never starts serving on a store it cannot reach.
     *
     * @param connectTimeout how long to keep trying before giving up
     * @throws IOException naming the store and what failed (unreachable, TLS, credentials)
     */
    ControlBackend open(URI uri, Duration connectTimeout) throws IOException;

    /** Opens the backend for {@code url}'s scheme. */
    static ControlBackend open(String url, Duration connectTimeout) throws IOException {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid registry URL '" + url
                    + "' (expected e.g. etcd://127.0.0.1:2379)", e);
        }
        List<String> known = new ArrayList<>();
        for (ControlBackendProvider p : ServiceLoader.load(ControlBackendProvider.class)) {
            if (p.scheme().equalsIgnoreCase(uri.getScheme())) {
                return p.open(uri, connectTimeout);
            }
            known.add(p.scheme() + "://");
        }
        throw new IllegalArgumentException("unsupported control plane registry '" + url + "' (known: "
                + (known.isEmpty() ? "none on the class path" : String.join(", ", known))
                + "; leave --registry out for the embedded store in --data-dir)");
    }
}
