package dev.weft.registry.weft;

import dev.weft.registry.Endpoint;
import dev.weft.registry.EndpointListener;
import dev.weft.registry.PolicyListener;
import dev.weft.registry.Registration;
import dev.weft.registry.Registry;
import dev.weft.registry.RegistryHealth;
import dev.weft.registry.Watch;
import dev.weft.registry.auth.ControlCredentials;
import dev.weft.registry.http.SmallHttpClient;
import dev.weft.registry.support.ConnectionHealth;
import dev.weft.registry.support.EventThread;
import dev.weft.registry.support.JsonValues;
import dev.weft.registry.tls.ControlTrust;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * {@link Registry} backed by Weft's embedded control plane ({@code weft://host:port}, or {@code weft+tls://} when it
 * serves TLS), over its HTTP/1.1 JSON API (see docs/registry.md).
 *
 * <p>Threading: one daemon thread per registry, "weft-registry-HOST:PORT" (the event thread), owns all state of
 * registrations and watch streams, runs their timers and calls listeners. HTTP exchanges are asynchronous, on a
 * {@link SmallHttpClient} (Netty, its own event loop "weft-http-registry"); their completions hop back to the event
 * thread, so nothing here ever blocks it. The only blocking call is
 * {@link Registration#close()}, which waits up to {@link #DEREGISTER_TIMEOUT} on the caller's thread for the
 * deregistration to be acknowledged.
 *
 * <p>Failure behaviour: while the control plane is unreachable, registrations keep retrying with backoff and
 * watchers keep their last list (no callback); once it is back, watch streams resume from the last revision seen and
 * heartbeats resume on the same lease, or take a new lease and register again if the control plane lost it.
 */
public final class WeftRegistry implements Registry {
    static final System.Logger LOG = System.getLogger(WeftRegistry.class.getName());
    public static final int DEFAULT_PORT = 7700;
    /** The lease TTL to register with unless configured otherwise: renewed every second, gone 3 s after a crash. */
    // 10 s, renewed every 3.3 s: with 3 s a sidecar starved of CPU (a saturated 2-core machine) missed two renewals in a
    // row and vanished from its peers' view while healthy, which callers saw as 503 unknown-service. A killed sidecar
    // is still avoided at once: its peers' dials are refused and retried elsewhere (docs/resilience.md).
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
    static final Duration DEREGISTER_TIMEOUT = Duration.ofSeconds(1);
    static final Duration MIN_TTL = Duration.ofMillis(100);
    static final Duration MAX_TTL = Duration.ofMinutes(10);
    /**
     * How often a client that trusts the control plane by pin or CA file re-reads its trust bundle: often enough that
     * each step of a root rotation (docs/security.md, at least one certificate lifetime each) reaches it in time.
     */
    static final Duration TRUST_REFRESH = Duration.ofMinutes(5);

    final String target;
    private final URI base;
    final SmallHttpClient http;
    final ConnectionHealth health;
    final Duration streamSilenceLimit;
    /** What each request proves itself with (docs/security.md); {@link ControlCredentials#NONE} sends nothing. */
    private final ControlCredentials credentials;
    private final EventThread events;
    /** The trust of a {@code weft+tls://} URL with a CA or pin, which adopts the served bundle; else null. */
    private final ControlTrust trust;
    private final java.util.concurrent.atomic.AtomicBoolean trustFetched = new java.util.concurrent.atomic.AtomicBoolean();
    // Event thread only.
    private final Map<String, ServiceStream> streams = new HashMap<>();
    private final Set<WeftRegistration> registrations = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * @param uri {@code weft://HOST[:PORT]}, or {@code weft+tls://HOST[:PORT]?ca=FILE|ca-pin=sha256:HEX} for a control
     *            plane serving TLS ({@link ControlPlaneUrl}); the port defaults to {@value #DEFAULT_PORT}
     */
    public WeftRegistry(URI uri) {
        this(uri, ControlCredentials.NONE);
    }

    /**
     * @param credentials sent with every request: registrations, watches and policy reads (the control plane wants
     *                    them for writes, and for topology reads unless it exempts loopback in its local mode)
     */
    public WeftRegistry(URI uri, ControlCredentials credentials) {
        this(uri, Duration.ofSeconds(7), credentials);
    }

    /**
     * @param streamSilenceLimit how long a watch stream may stay silent before it is declared dead and reopened;
     *                           the control plane sends a heartbeat line every 2 s by default, so 7 s is three missed
     */
    WeftRegistry(URI uri, Duration streamSilenceLimit) {
        this(uri, streamSilenceLimit, ControlCredentials.NONE);
    }

    WeftRegistry(URI uri, Duration streamSilenceLimit, ControlCredentials credentials) {
        Objects.requireNonNull(uri, "uri");
        this.credentials = Objects.requireNonNull(credentials, "credentials");
        ControlPlaneUrl url = ControlPlaneUrl.parse(uri.toString());
        this.target = url.authority();
        this.base = URI.create(url.httpBase());
        this.streamSilenceLimit = streamSilenceLimit;
        // Not the JDK's HttpClient: with its TLS stack it loaded about 600 classes into every sidecar (docs/benchmarks.md).
        this.http = url.newClient("registry", CONNECT_TIMEOUT);
        this.trust = url.tls() && url.trust().configured() ? url.trust() : null;
        this.health = new ConnectionHealth("weft", target);
        this.events = new EventThread("weft-registry-" + target);
        Duration check = Duration.ofMillis(Math.max(100, streamSilenceLimit.toMillis() / 4));
        events.every(() -> streams.values().forEach(ServiceStream::checkSilence), check, check);
        if (trust != null) {
            events.every(this::refreshTrust, TRUST_REFRESH, TRUST_REFRESH);
        }
    }

    /**
     * Reads {@code GET /v1/trust-bundle} over a connection its trust verified, and trusts those roots from then on
     * beside the pin or CA file: so a client that pinned the old root follows a root rotation with overlap (the new
     * root is in the bundle before it signs anything). Event thread.
     */
    private void refreshTrust() {
        call("GET", "/v1/trust-bundle", null, CALL_TIMEOUT).whenCompleteAsync((reply, error) -> {
            if (reply == null || !reply.ok()) {
                return;   // the failure is in health(); the next refresh tries again
            }
            try {
                int roots = trust.adopt(JsonValues.string(JsonValues.readObject(reply.body()), "trustBundle"));
                LOG.log(System.Logger.Level.DEBUG, "trusting {0} root(s) of the control plane at {1}", roots, target);
            } catch (IOException | IllegalArgumentException e) {
                LOG.log(System.Logger.Level.WARNING, "unreadable trust bundle from the control plane at {0}: {1}",
                        target, e.getMessage());
            }
        }, events());
    }

    @Override
    public Registration register(Endpoint endpoint, Duration ttl) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("ttl out of range: " + ttl + " (expected " + MIN_TTL + ".." + MAX_TTL
                    + "; default " + DEFAULT_TTL.toSeconds() + "s)");
        }
        requireOpen();
        WeftRegistration registration = new WeftRegistration(this, endpoint, ttl);
        registrations.add(registration);
        registration.start();
        return registration;
    }

    @Override
    public Watch watch(String service, EndpointListener listener) {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(listener, "listener");
        requireOpen();
        ServiceStream.Subscriber subscriber = new ServiceStream.Subscriber(this, service, listener);
        onEvents(() -> streams.computeIfAbsent(service, s -> new ServiceStream(this, s)).add(subscriber));
        return subscriber;
    }

    @Override
    public void putPolicy(String name, String document) throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(document, "document");
        requireOpen();
        byte[] yaml = document.getBytes(StandardCharsets.UTF_8);
        try {
            String path = "/v1/policies/" + segment(name);
            SmallHttpClient.Response response = http.sendBlocking("PUT", uri(path),
                    headers("PUT", path, yaml, "application/yaml"), yaml, 0, yaml.length, Duration.ofSeconds(5));
            Reply reply = new Reply(response.status(), response.body());
            if (!reply.ok()) {
                throw new IOException("control plane at " + target + " refused policy '" + name + "': " + errorText(reply));
            }
            health.success();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while storing policy '" + name + "'", e);
        } catch (IOException e) {
            health.failure(describe("PUT", "/v1/policies/" + name, e));
            throw e.getMessage() != null && e.getMessage().startsWith("control plane at") ? e
                    : new IOException(describe("PUT", "/v1/policies/" + name, e), e);
        }
    }

    @Override
    public Watch watchPolicies(PolicyListener listener) {
        Objects.requireNonNull(listener, "listener");
        requireOpen();
        return new PolicyPoller(this, listener);
    }

    /** Event thread: drops a closed watch's listener, and the stream with its last listener. */
    void unwatch(ServiceStream.Subscriber subscriber) {
        onEvents(() -> {
            ServiceStream stream = streams.get(subscriber.service());
            if (stream != null && stream.remove(subscriber)) {
                streams.remove(subscriber.service());
            }
        });
    }

    void forget(WeftRegistration registration) {
        registrations.remove(registration);
    }

    @Override
    public RegistryHealth health() {
        return health.snapshot();
    }

    /** Stops heartbeats and watch streams without deregistering, as a killed sidecar would. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        registrations.forEach(WeftRegistration::stopHeartbeats);
        onEvents(() -> {
            streams.values().forEach(ServiceStream::stop);
            streams.clear();
        });
        // Called from a listener on the event thread, this does not wait: the queued tasks find `closed` set.
        events.shutdown();
        http.close();
    }

    boolean isClosed() {
        return closed;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("registry " + target + " is closed");
        }
    }

    // --- plumbing shared by registrations and streams ---

    /** Runs {@code task} on the event thread; dropped silently once the registry is closed. */
    void onEvents(Runnable task) {
        events.execute(task);
    }

    void schedule(Runnable task, Duration delay, Consumer<ScheduledFuture<?>> timer) {
        events.schedule(task, delay, timer);
    }

    /** The event thread as an executor; it never throws once the registry is closed. */
    Executor events() {
        return events;
    }

    URI uri(String path) {
        return base.resolve(path);
    }

    static String segment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    record Reply(int status, byte[] body) {
        boolean ok() {
            return status / 100 == 2;
        }
    }

    record ErrorBody(String error, String code) {
        static ErrorBody read(byte[] json) throws IOException {
            Map<String, Object> m = JsonValues.readObject(json);
            return new ErrorBody(JsonValues.string(m, "error"), JsonValues.string(m, "code"));
        }
    }

    /**
     * One asynchronous request/response call; records contact or failure in {@link #health}.
     *
     * @param body a JSON document as {@link JsonValues#write} takes it, or null
     */
    CompletableFuture<Reply> call(String method, String path, Map<String, Object> body, Duration timeout) {
        byte[] bytes = body == null ? null : JsonValues.write(body, false);
        Map<String, String> headers = headers(method, path, bytes, "application/json");
        return http.send(method, uri(path), headers, bytes, timeout).handle((response, error) -> {
            if (error != null) {
                health.failure(describe(method, path, error));
                throw error instanceof CompletionException ce ? ce : new CompletionException(error);
            }
            Reply reply = new Reply(response.status(), response.body());
            if (reply.ok()) {
                health.success();
                if (trust != null && trustFetched.compareAndSet(false, true)) {
                    events.execute(this::refreshTrust);   // after the first call that the pin or CA file let through
                }
            } else {
                health.rejected(method + " " + path + ": " + errorText(reply));
            }
            return reply;
        });
    }

    /** The blocking variant, for {@link Registration#close()}; never throws. */
    Reply callBlocking(String method, String path, Duration timeout) {
        try {
            SmallHttpClient.Response response = http.sendBlocking(method, uri(path), headers(method, path, null, null),
                    null, 0, 0, timeout);
            health.success();
            return new Reply(response.status(), response.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                health.failure(describe(method, path, e));
            }
            return null;
        }
    }

    /** The headers of one request to {@code path} (the raw path and query), with its credentials. */
    Map<String, String> headers(String method, String path, byte[] body, String contentType) {
        return headers(method, path, body, contentType, "application/json");
    }

    Map<String, String> headers(String method, String path, byte[] body, String contentType, String accept) {
        Map<String, String> h = new HashMap<>(4);
        h.put("Accept", accept);
        if (body != null) {
            h.put("Content-Type", contentType);
        }
        String authorization = credentials.authorization(method, path, body);
        if (authorization != null) {
            h.put("Authorization", authorization);
        }
        return h;
    }

    /** The control plane's error code ("unknown-lease", ...) or null. */
    String errorCode(Reply reply) {
        try {
            return ErrorBody.read(reply.body()).code();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    String errorText(Reply reply) {
        try {
            ErrorBody e = ErrorBody.read(reply.body());
            if (e.error() != null) {
                return reply.status() + " " + e.error();
            }
        } catch (IOException | RuntimeException e) {
            // Not our JSON (a proxy's error page?): show it raw below.
        }
        String raw = new String(reply.body(), StandardCharsets.UTF_8);
        return reply.status() + " " + (raw.length() > 200 ? raw.substring(0, 200) + "..." : raw);
    }

    String describe(String method, String path, Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String what;
        if (cause instanceof ConnectException) {
            what = "cannot connect to control plane at " + target + " (is `weft control` running?)";
        } else if (cause instanceof HttpTimeoutException) {
            what = "control plane at " + target + " did not answer in time";
        } else if (cause instanceof javax.net.ssl.SSLException) {
            what = "TLS with the control plane at " + target + " failed: " + cause.getMessage();
        } else if (!"https".equals(base.getScheme()) && cause instanceof IOException
                && String.valueOf(cause.getMessage()).contains("closed before the answer")) {
            // What a control plane serving TLS does to plain HTTP: it closes without a word (docs/security.md).
            what = cause.getMessage() + " (if it serves TLS, --api-tls, use weft+tls://" + target + ")";
        } else {
            what = cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
        }
        return method + " " + path + ": " + what;
    }

    // --- wire format (see docs/registry.md), read and written with jackson-core only (JsonValues says why) ---

    record LeaseRequest(long ttlMillis) {
        Map<String, Object> json() {
            return Map.of("ttlMillis", ttlMillis);
        }
    }

    record LeaseGrant(String leaseId, long ttlMillis) {
        static LeaseGrant read(byte[] json) throws IOException {
            Map<String, Object> m = JsonValues.readObject(json);
            return new LeaseGrant(JsonValues.string(m, "leaseId"), JsonValues.number(m, "ttlMillis"));
        }
    }

    record KeepAliveReply(String leaseId, long ttlMillis, Integer endpoints) {
        static KeepAliveReply read(byte[] json) throws IOException {
            Map<String, Object> m = JsonValues.readObject(json);
            Long endpoints = JsonValues.optionalNumber(m, "endpoints");
            return new KeepAliveReply(JsonValues.string(m, "leaseId"), JsonValues.number(m, "ttlMillis"),
                    endpoints == null ? null : Math.toIntExact(endpoints));
        }
    }

    record EndpointBody(String host, int port, int weight, int capacity, Map<String, String> metadata,
                        String leaseId) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("host", host);
            m.put("port", port);
            m.put("weight", weight);
            m.put("capacity", capacity);
            m.put("metadata", metadata);
            m.put("leaseId", leaseId);
            return m;
        }
    }

    record WatchLine(String type, String service, long revision, List<Endpoint> endpoints) {
        static WatchLine read(String json) throws IOException {
            Map<String, Object> m = JsonValues.readObject(json);
            List<Endpoint> endpoints = new ArrayList<>();
            for (Object o : JsonValues.list(m, "endpoints")) {
                Map<String, Object> e = JsonValues.object(o, "endpoint");
                endpoints.add(new Endpoint(JsonValues.string(e, "service"), JsonValues.string(e, "id"),
                        JsonValues.string(e, "host"), JsonValues.integer(e, "port"), JsonValues.integer(e, "weight"),
                        JsonValues.integer(e, "capacity"), JsonValues.strings(e, "metadata")));
            }
            return new WatchLine(JsonValues.string(m, "type"), JsonValues.string(m, "service"),
                    JsonValues.number(m, "revision"), endpoints);
        }
    }

    @Override
    public String toString() {
        return "WeftRegistry[" + target + "]";
    }
}
