package dev.weft.registry;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Opens a registry by URL: {@code weft://host:port} (embedded control plane), {@code etcd://h1:2379,...}. */
public final class Registries {
    private Registries() {}

    public static Registry open(String url) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid registry URL '" + url + "' (expected e.g. weft://127.0.0.1:7700)", e);
        }
        List<String> known = new ArrayList<>();
        for (RegistryProvider p : ServiceLoader.load(RegistryProvider.class)) {
            if (p.scheme().equalsIgnoreCase(uri.getScheme())) {
                return p.open(uri);
            }
            known.add(p.scheme() + "://");
        }
        throw new IllegalArgumentException("unsupported registry URL '" + url + "' (known schemes: " + known + ")");
    }
}
