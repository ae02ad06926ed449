package dev.weft.registry.etcd;

import dev.weft.registry.Registry;
import dev.weft.registry.RegistryProvider;

import java.net.URI;

/** Opens {@code etcd://h1:2379,h2:2379,...} registries; the URL's options are described on {@link EtcdSettings}. */
public final class EtcdRegistryProvider implements RegistryProvider {
    @Override
    public String scheme() {
        return "etcd";
    }

    @Override
    public Registry open(URI uri) {
        return new EtcdRegistry(uri);
    }
}
