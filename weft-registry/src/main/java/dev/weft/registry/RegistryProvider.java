package dev.weft.registry;

import java.net.URI;

/**
 * Factory for one registry backend, found with {@link java.util.ServiceLoader}: a backend module lists its
 * provider in META-INF/services/dev.weft.registry.RegistryProvider and is selected by URL scheme.
 */
public interface RegistryProvider {
    /** URL scheme this provider handles, e.g. "weft" or "etcd". */
    String scheme();

    Registry open(URI uri);

    /**
     * Opens the registry with credentials for Weft's control plane API (docs/security.md). A backend with its own
     * authentication (etcd: user and password in the URL, client certificates) ignores them.
     */
    default Registry open(URI uri, dev.weft.registry.auth.ControlCredentials credentials) {
        return open(uri);
    }
}
