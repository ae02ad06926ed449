package dev.weft.registry.etcd;

import dev.weft.registry.Registries;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an {@code etcd://} URL says: the members to talk to, TLS and credentials, and the key prefix.
 *
 * <pre>
 *   etcd://h1:2379,h2:2379,h3:2379?tls=true&amp;ca=/etc/weft/ca.pem&amp;cert=/etc/weft/client.pem&amp;key=/etc/weft/client.key
 *                                 &amp;user=weft&amp;password-file=/run/secrets/etcd&amp;prefix=/weft
 * </pre>
 *
 * Secrets can stay out of the URL (and out of {@code ps}): {@code WEFT_ETCD_USER} and {@code WEFT_ETCD_PASSWORD}
 * are read when the URL has no {@code user} / {@code password} / {@code password-file}.
 *
 * @param endpoints host:port of each member given, in order
 * @param root      the key prefix, e.g. /weft
 */
record EtcdSettings(List<String> endpoints, boolean tls, Path ca, Path cert, Path key, String user, String password,
                    String root) {
    static final int DEFAULT_PORT = 2379;
    static final Set<String> OPTIONS = Set.of("tls", "ca", "cert", "key", "user", "password", "password-file", "prefix");
    static final String EXAMPLE = "etcd://127.0.0.1:2379 or etcd://h1:2379,h2:2379,h3:2379?tls=true&ca=/path/ca.pem";

    static EtcdSettings parse(URI uri) {
        return parse(uri, System.getenv());
    }

    static EtcdSettings parse(URI uri, Map<String, String> env) {
        if (uri == null || !"etcd".equalsIgnoreCase(uri.getScheme()) || uri.getRawAuthority() == null) {
            throw new IllegalArgumentException("invalid etcd registry URL '" + uri + "' (expected " + EXAMPLE + ")");
        }
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/")) {
            throw new IllegalArgumentException("etcd registry URL '" + redact(uri) + "' has a path '" + uri.getRawPath()
                    + "' (expected none; choose the key prefix with ?prefix=/weft)");
        }
        List<String> endpoints = new ArrayList<>();
        for (String member : uri.getRawAuthority().split(",")) {
            endpoints.add(member(member.trim(), uri));
        }
        Map<String, String> options = options(uri);
        String user = options.containsKey("user") ? options.get("user") : env.get("WEFT_ETCD_USER");
        String password = options.get("password");
        if (options.containsKey("password-file")) {
            if (password != null) {
                throw new IllegalArgumentException("etcd URL gives both password and password-file (expected one)");
            }
            password = readPassword(Path.of(options.get("password-file")));
        }
        if (password == null && user != null) {
            password = env.get("WEFT_ETCD_PASSWORD");
        }
        if (user != null && (password == null || password.isEmpty())) {
            throw new IllegalArgumentException("etcd user '" + user + "' has no password (expected password=..., "
                    + "password-file=PATH or the WEFT_ETCD_PASSWORD environment variable)");
        }
        if (user == null && password != null && options.containsKey("password")) {
            throw new IllegalArgumentException("etcd URL gives a password but no user (expected user=NAME too)");
        }
        Path ca = path(options, "ca");
        Path cert = path(options, "cert");
        Path key = path(options, "key");
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("etcd client certificate needs both cert=PATH and key=PATH (got only "
                    + (cert != null ? "cert" : "key") + ")");
        }
        boolean tls;
        String tlsOption = options.get("tls");
        if (tlsOption == null) {
            tls = ca != null || cert != null;
        } else if (tlsOption.equalsIgnoreCase("true")) {
            tls = true;
        } else if (tlsOption.equalsIgnoreCase("false")) {
            if (ca != null || cert != null) {
                throw new IllegalArgumentException("etcd URL says tls=false but gives ca/cert/key (expected tls=true)");
            }
            tls = false;
        } else {
            throw new IllegalArgumentException("etcd URL option tls=" + tlsOption + " (expected true or false)");
        }
        String root = options.getOrDefault("prefix", KeyLayout.DEFAULT_ROOT);
        return new EtcdSettings(List.copyOf(endpoints), tls, ca, cert, key, user, password, root);
    }

    /** Members as given, for health() and logs; never the credentials. */
    String target() {
        return String.join(",", endpoints);
    }

    /**
     * A jetcd client configured so that Weft, not jetcd, decides about retries: calls fail fast while etcd is
     * unreachable (no wait-for-ready, no automatic retry) and every call but the long-lived watch stream carries a
     * deadline, so the registry's own backoff and health reporting see each failure when it happens.
     */
    Client newClient(Duration callTimeout) {
        List<URI> uris = endpoints.stream().map(e -> URI.create((tls ? "https://" : "http://") + e)).toList();
        ClientBuilder b = Client.builder()
                .endpoints(uris)
                .waitForReady(false)
                .retryMaxAttempts(0)
                .connectTimeout(Duration.ofSeconds(1))
                // Pings find a dead connection that never closed (a partition) within 15 s. etcd refuses pings more
                // often than every 5 s, and pings on an idle connection ("too_many_pings"), hence no idle pings.
                .keepaliveTime(Duration.ofSeconds(10))
                .keepaliveTimeout(Duration.ofSeconds(5))
                .keepaliveWithoutCalls(false)
                .interceptor(new CallDeadlines(callTimeout));
        if (user != null) {
            b.user(ByteSequence.from(user, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
        if (tls) {
            b.sslContext(sslContext());
        }
        return b.build();
    }

    private SslContext sslContext() {
        try {
            SslContextBuilder ssl = GrpcSslContexts.forClient();
            if (ca != null) {
                ssl.trustManager(ca.toFile());
            }
            if (cert != null) {
                checkPkcs8(key);
                ssl.keyManager(cert.toFile(), key.toFile());
            }
            return ssl.build();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("cannot set up TLS to etcd (ca=" + ca + ", cert=" + cert + ", key=" + key
                    + "): " + e.getMessage() + " (expected PEM files: CA certificate(s), client certificate chain, "
                    + "unencrypted PKCS#8 key)", e);
        }
    }

    /** Netty reads only PKCS#8 keys; etcd's usual tooling writes PKCS#1/SEC1 ones, so say how to convert. */
    private static void checkPkcs8(Path key) throws IOException {
        String pem = Files.readString(key, StandardCharsets.US_ASCII);
        if (pem.contains("BEGIN RSA PRIVATE KEY") || pem.contains("BEGIN EC PRIVATE KEY")
                || pem.contains("BEGIN ENCRYPTED PRIVATE KEY")) {
            throw new IllegalArgumentException("key " + key + " is not an unencrypted PKCS#8 key (expected "
                    + "'BEGIN PRIVATE KEY'; convert with: openssl pkcs8 -topk8 -nocrypt -in " + key + " -out key.pk8)");
        }
    }

    private static String member(String member, URI uri) {
        String host;
        int port = DEFAULT_PORT;
        int colon = member.lastIndexOf(':');
        if (member.startsWith("[")) {
            int close = member.indexOf(']');
            if (close < 0) {
                throw badMember(member, uri);
            }
            host = member.substring(0, close + 1);
            if (close + 1 < member.length()) {
                if (member.charAt(close + 1) != ':') {
                    throw badMember(member, uri);
                }
                port = port(member.substring(close + 2), member, uri);
            }
        } else if (colon >= 0) {
            host = member.substring(0, colon);
            port = port(member.substring(colon + 1), member, uri);
        } else {
            host = member;
        }
        if (host.isEmpty() || host.contains("@")) {
            throw badMember(member, uri);
        }
        return host + ":" + port;
    }

    private static int port(String s, String member, URI uri) {
        try {
            int port = Integer.parseInt(s);
            if (port > 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw badMember(member, uri);
    }

    private static IllegalArgumentException badMember(String member, URI uri) {
        return new IllegalArgumentException("invalid etcd member '" + member + "' in '" + redact(uri)
                + "' (expected HOST:PORT, e.g. 10.0.0.1:2379; members separated by commas)");
    }

    private static Map<String, String> options(URI uri) {
        Map<String, String> options = new LinkedHashMap<>();
        String query = uri.getRawQuery();
        if (query == null || query.isEmpty()) {
            return options;
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (!OPTIONS.contains(name)) {
                throw new IllegalArgumentException("unknown etcd URL option '" + name + "' (known: "
                        + String.join(", ", OPTIONS.stream().sorted().toList()) + ")");
            }
            if (options.put(name, value) != null) {
                throw new IllegalArgumentException("etcd URL option '" + name + "' given twice");
            }
        }
        return options;
    }

    private static Path path(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            return null;
        }
        Path p = Path.of(value);
        if (!Files.isReadable(p)) {
            throw new IllegalArgumentException("etcd URL option " + name + "=" + value + ": no readable file there");
        }
        return p;
    }

    private static String readPassword(Path file) {
        try {
            // A trailing newline is how editors and `echo` leave a secret file; it is never part of the password.
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read etcd password-file " + file + ": " + e.getMessage(), e);
        }
    }

    /** The URL without its password, for error messages. */
    static String redact(URI uri) {
        return Registries.redact(uri.toString());
    }

    @Override
    public String toString() {
        return "EtcdSettings[" + target() + ", tls=" + tls + ", user=" + user + ", prefix=" + root + "]";
    }
}
