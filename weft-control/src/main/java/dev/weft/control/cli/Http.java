package dev.weft.control.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.weft.registry.tls.ControlTrust;
import dev.weft.registry.weft.ControlPlaneUrl;

/**
 * The few HTTP GETs the operator commands make, with timeouts and errors that say which URL failed and how. A control
 * plane serving TLS ({@code weft+tls://}) is reached through a client that trusts it as the URL's
 * {@code --control-ca}/{@code --control-ca-pin} say ({@link #trust}); every other URL through the JDK's defaults.
 */
public final class Http implements AutoCloseable {
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    /** Clients for control planes serving TLS, by {@code https://HOST:PORT}. */
    private final Map<String, HttpClient> pinned = new ConcurrentHashMap<>();

    /**
     * Trusts the control plane of {@code target} ({@code weft+tls://HOST:PORT?ca=...|ca-pin=...}) for the calls to it
     * from now on; nothing for any other target.
     */
    Http trust(String target) {
        if (ControlPlaneUrl.isControlPlane(target)) {
            ControlPlaneUrl url = ControlPlaneUrl.parse(target);
            if (url.tls()) {
                pinned.computeIfAbsent(url.httpBase(), b -> tlsClient(url.trust()));
            }
        }
        return this;
    }

    /** The JDK's client over TLS 1.3, trusting what {@code trust} says; it checks the host name itself. */
    public static HttpClient tlsClient(ControlTrust trust) {
        javax.net.ssl.SSLParameters tls = new javax.net.ssl.SSLParameters();
        tls.setProtocols(new String[]{ControlTrust.PROTOCOL});
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2))
                .sslContext(trust.jdk()).sslParameters(tls).build();
    }

    /** @throws IOException naming the URL, for a failed connection or a non-2xx answer */
    String get(URI uri) throws IOException {
        return get(uri, null);
    }

    /**
     * @param authorization the {@code Authorization} header's value (the operator token, for the control plane only;
     *                      {@link #authorizationFor}), or null
     * @throws IOException naming the URL, for a failed connection or a non-2xx answer
     */
    String get(URI uri, String authorization) throws IOException {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET();
        if (authorization != null) {
            builder.header("Authorization", authorization);
        }
        HttpRequest request = builder.build();
        HttpResponse<String> response;
        try {
            HttpClient chosen = pinned.getOrDefault(uri.getScheme() + "://" + uri.getRawAuthority(), client);
            response = chosen.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching " + uri, e);
        } catch (IOException e) {
            throw new IOException("cannot reach " + uri + ": " + (e.getMessage() == null ? e.getClass().getSimpleName()
                    : e.getMessage()), e);
        }
        if (response.statusCode() / 100 != 2) {
            String body = response.body() == null ? "" : response.body().strip();
            throw new HttpStatusException(response.statusCode(), "GET " + uri + " answered " + response.statusCode()
                    + (body.isEmpty() ? "" : ": " + (body.length() > 300 ? body.substring(0, 300) + "..." : body))
                    + (response.statusCode() == 401 || response.statusCode() == 403 ? (authorization == null
                    ? " (no operator token sent: pass --admin-token-file, the control plane's DATA_DIR/admin.token)"
                    : " (sent the operator token of --admin-token-file)") : ""));
        }
        return response.body();
    }

    /** A non-2xx answer. */
    static final class HttpStatusException extends IOException {
        final int status;

        HttpStatusException(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /**
     * The HTTP base of a control plane or Zipkin server: {@code weft://HOST:PORT} ({@code weft+tls://} for https),
     * {@code http(s)://HOST:PORT[/...]} or {@code HOST:PORT}. A trailing {@code /api/v2/...} is cut, so a span
     * endpoint URL works too.
     */
    static String base(String target) {
        String t = target.trim();
        if (ControlPlaneUrl.isControlPlane(t)) {
            t = ControlPlaneUrl.parse(t).httpBase();
        } else if (!t.toLowerCase(Locale.ROOT).startsWith("http://") && !t.toLowerCase(Locale.ROOT).startsWith("https://")) {
            if (t.contains("://")) {
                throw new IllegalArgumentException("unsupported address '" + target
                        + "' (expected weft://HOST:PORT, weft+tls://HOST:PORT, http(s)://HOST:PORT or HOST:PORT)");
            }
            t = "http://" + t;
        }
        int api = t.indexOf("/api/");
        if (api > 0) {
            t = t.substring(0, api);
        }
        while (t.endsWith("/")) {
            t = t.substring(0, t.length() - 1);
        }
        return t;
    }

    /** {@link #base(String)}, with a bad address reported as a usage error of the command. */
    static String base(picocli.CommandLine.Model.CommandSpec spec, String target) {
        try {
            return base(target);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /**
     * The operator token's header for {@code target} if it is the control plane of {@code control}, else null: a
     * Zipkin server named with {@code --collector} never gets the token.
     */
    static String authorizationFor(String target, dev.weft.registry.cli.ControlPlaneOptions control) {
        return target == null || base(target).equals(base(control.url())) ? control.authorization() : null;
    }

    @Override
    public void close() {
        client.shutdownNow();
        pinned.values().forEach(HttpClient::shutdownNow);
    }
}
