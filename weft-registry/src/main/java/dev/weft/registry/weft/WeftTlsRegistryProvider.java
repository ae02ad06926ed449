package dev.weft.registry.weft;

import dev.weft.registry.Registry;
import dev.weft.registry.RegistryProvider;
import dev.weft.registry.auth.ControlCredentials;

import java.net.URI;

/**
 * Opens {@code weft+tls://HOST:PORT} registries: Weft's control plane serving its API over TLS ({@code --api-tls}),
 * trusted as the URL's {@code ca=}/{@code ca-pin=} options say ({@link ControlPlaneUrl}).
 */
public final class WeftTlsRegistryProvider implements RegistryProvider {
    @Override
    public String scheme() {
        return ControlPlaneUrl.TLS_SCHEME;
    }

    @Override
    public Registry open(URI uri) {
        return new WeftRegistry(uri);
    }

    @Override
    public Registry open(URI uri, ControlCredentials credentials) {
        return new WeftRegistry(uri, credentials);
    }
}
