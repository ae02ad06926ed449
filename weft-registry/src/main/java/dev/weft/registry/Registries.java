package dev.weft.registry;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Opens a registry by URL: {@code weft://host:port} (embedded control plane), {@code etcd://h1:2379,...}. */
public final class Registries {
    private Registries() {}

    public static Registry open(String url) {
        return open(url, dev.weft.registry.auth.ControlCredentials.NONE);
    }

    /**
     * Opens a registry whose requests carry {@code credentials}: what a {@code weft://} control plane wants for writes
     * and topology reads (docs/security.md); other backends authenticate their own way and ignore them.
     */
    public static Registry open(String url, dev.weft.registry.auth.ControlCredentials credentials) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid registry URL '" + url + "' (expected e.g. weft://127.0.0.1:7700)", e);
        }
        List<String> known = new ArrayList<>();
        for (RegistryProvider p : ServiceLoader.load(RegistryProvider.class)) {
            if (p.scheme().equalsIgnoreCase(uri.getScheme())) {
                return p.open(uri, credentials);
            }
            known.add(p.scheme() + "://");
        }
        throw new IllegalArgumentException("unsupported registry URL '" + url + "' (known schemes: " + known + ")");
    }

    /**
     * The URL as pages and logs may show it: a password in the user info ({@code etcd://u:secret@h}) or in a
     * {@code password} option becomes {@code ***}. Other options stay: file paths and user names are what an
     * operator debugging a connection needs to see.
     */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String s = url;
        int scheme = s.indexOf("://");
        int at = s.indexOf('@');
        int hostEnd = firstOf(s, scheme < 0 ? 0 : scheme + 3, '/', '?');
        if (scheme >= 0 && at > scheme && at < hostEnd) {
            int colon = s.indexOf(':', scheme + 3);
            if (colon > 0 && colon < at) {
                s = s.substring(0, colon + 1) + "***" + s.substring(at);
            }
        }
        int q = s.indexOf('?');
        if (q < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.substring(0, q + 1));
        String[] options = s.substring(q + 1).split("&", -1);
        for (int i = 0; i < options.length; i++) {
            String o = options[i];
            int eq = o.indexOf('=');
            String name = eq < 0 ? o : o.substring(0, eq);
            out.append(i == 0 ? "" : "&").append(name.equalsIgnoreCase("password") && eq >= 0 ? name + "=***" : o);
        }
        return out.toString();
    }

    private static int firstOf(String s, int from, char a, char b) {
        int i = s.indexOf(a, from);
        int j = s.indexOf(b, from);
        if (i < 0) {
            return j < 0 ? s.length() : j;
        }
        return j < 0 ? i : Math.min(i, j);
    }
}
