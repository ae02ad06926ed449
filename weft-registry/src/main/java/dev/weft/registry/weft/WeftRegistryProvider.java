package dev.weft.registry.weft;

import dev.weft.registry.Registry;
import dev.weft.registry.RegistryProvider;

import java.net.URI;

/** Opens {@code weft://HOST:PORT} registries: clients of Weft's embedded control plane ({@code weft control}). */
public final class WeftRegistryProvider implements RegistryProvider {
    @Override
    public String scheme() {
        return "weft";
    }

    @Override
    public Registry open(URI uri) {
        return new WeftRegistry(uri);
    }

    @Override
    public Registry open(URI uri, dev.weft.registry.auth.ControlCredentials credentials) {
        return new WeftRegistry(uri, credentials);
    }
}
