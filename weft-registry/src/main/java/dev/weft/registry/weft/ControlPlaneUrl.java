package dev.weft.registry.weft;

import dev.weft.registry.http.SmallHttpClient;
import dev.weft.registry.tls.ControlTrust;

import javax.net.ssl.SSLException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The address of Weft's control plane, parsed once for every client of it (the registry, the sidecar's identity and
 * span clients, the operator commands): {@code weft://HOST[:PORT]} is plain HTTP, {@code weft+tls://HOST[:PORT]} is
 * TLS 1.3 and nothing else (docs/security.md, "The control plane's API over TLS"). The scheme alone says which: a TLS
 * client never falls back to plain HTTP, and a CA or a pin given with a plain URL is an error rather than a silent
 * upgrade or a silent no-op.
 *
 * <p>How a TLS client trusts the server travels with the URL as options, as the {@code etcd://} URL carries its
 * {@code ca=}: {@code ?ca=FILE} (a PEM bundle, {@code --control-ca}) and {@code ?ca-pin=sha256:HEX}
 * ({@code --control-ca-pin}); {@link #withTrust} is how the commands' flags become them.
 *
 * @param trust how the server's certificate is checked; null for a plain URL
 */
public record ControlPlaneUrl(String host, int port, ControlTrust trust) {
    public static final String SCHEME = "weft";
    public static final String TLS_SCHEME = "weft+tls";
    public static final int DEFAULT_PORT = 7700;
    private static final String EXPECTED = "expected weft://HOST:PORT, or weft+tls://HOST:PORT for a control plane"
            + " serving TLS, e.g. weft://127.0.0.1:7700";

    public ControlPlaneUrl {
        Objects.requireNonNull(host, "host");
    }

    /** Whether {@code url} names Weft's control plane, plain or TLS (not etcd or another registry). */
    public static boolean isControlPlane(String url) {
        if (url == null) {
            return false;
        }
        String u = url.strip().toLowerCase(Locale.ROOT);
        return u.startsWith(SCHEME + "://") || u.startsWith(TLS_SCHEME + "://");
    }

    /**
     * @throws IllegalArgumentException naming the URL and the expected forms; for a bad {@code ca} or {@code ca-pin},
     *                                  naming the file or the pin
     */
    public static ControlPlaneUrl parse(String url) {
        URI uri;
        try {
            uri = URI.create(Objects.requireNonNull(url, "url").strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid control plane URL '" + url + "' (" + EXPECTED + ")", e);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        boolean tls = scheme.equals(TLS_SCHEME);
        if (!tls && !scheme.equals(SCHEME) || uri.getHost() == null) {
            throw new IllegalArgumentException("invalid control plane URL '" + url + "' (" + EXPECTED + ")");
        }
        Path ca = null;
        String pin = null;
        if (uri.getRawQuery() != null && !uri.getRawQuery().isEmpty()) {
            for (String option : uri.getRawQuery().split("&")) {
                int eq = option.indexOf('=');
                String name = eq < 0 ? option : option.substring(0, eq);
                String value = eq < 0 ? "" : URLDecoder.decode(option.substring(eq + 1), StandardCharsets.UTF_8);
                switch (name) {
                    case "ca" -> ca = Path.of(value);
                    case "ca-pin" -> pin = value;
                    default -> throw new IllegalArgumentException("unknown option '" + name + "' in control plane"
                            + " URL '" + url + "' (known: ca=FILE, ca-pin=sha256:HEX)");
                }
            }
        }
        if (!tls && (ca != null || pin != null)) {
            throw new IllegalArgumentException(plainWithTrust(url));
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        return new ControlPlaneUrl(uri.getHost(), port, tls ? ControlTrust.of(ca, pin) : null);
    }

    /**
     * {@code url} with the trust of {@code --control-ca}/{@code --control-ca-pin} added as options; unchanged without
     * either. A control plane URL is also parsed, so that a CA file that cannot be read or a malformed pin is said at
     * once, as a usage error, rather than at the first handshake.
     *
     * @throws IllegalArgumentException if either is given with a URL that is not {@code weft+tls://}, or is unusable
     */
    public static String withTrust(String url, Path caFile, String pin) {
        if (caFile == null && pin == null) {
            if (isControlPlane(url)) {
                parse(url);
            }
            return url;
        }
        if (!url.strip().toLowerCase(Locale.ROOT).startsWith(TLS_SCHEME + "://")) {
            throw new IllegalArgumentException(plainWithTrust(url));
        }
        StringBuilder b = new StringBuilder(url.strip());
        char sep = url.indexOf('?') < 0 ? '?' : '&';
        if (caFile != null) {
            b.append(sep).append("ca=").append(URLEncoder.encode(caFile.toString(), StandardCharsets.UTF_8));
            sep = '&';
        }
        if (pin != null) {
            b.append(sep).append("ca-pin=").append(URLEncoder.encode(pin.strip(), StandardCharsets.UTF_8));
        }
        parse(b.toString());
        return b.toString();
    }

    private static String plainWithTrust(String url) {
        return "--control-ca and --control-ca-pin are for a control plane serving TLS: its URL is"
                + " weft+tls://HOST:PORT (got '" + url + "'; a weft:// URL is plain HTTP)";
    }

    public boolean tls() {
        return trust != null;
    }

    /** {@code HOST:PORT}, as thread names and messages show it. */
    public String authority() {
        return host + ":" + port;
    }

    /** The HTTP base, {@code http://HOST:PORT} or {@code https://HOST:PORT}, without a trailing slash. */
    public String httpBase() {
        return (tls() ? "https://" : "http://") + authority();
    }

    /** {@code path} (with its query) on the control plane, e.g. {@code /v1/certificates}. */
    public URI resolve(String path) {
        return URI.create(httpBase() + path);
    }

    /** A client for this control plane: with TLS, one that trusts it as {@link #trust} says and nothing else. */
    public SmallHttpClient newClient(String name, Duration connectTimeout) {
        try {
            return new SmallHttpClient(name, connectTimeout, tls() ? trust.netty() : null);
        } catch (SSLException e) {
            throw new IllegalStateException("cannot set up TLS to the control plane at " + authority() + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return (tls() ? TLS_SCHEME : SCHEME) + "://" + authority();
    }
}
