package dev.weft.registry.etcd;

import dev.weft.registry.Endpoint;
import dev.weft.registry.EndpointListener;
import dev.weft.registry.Registration;
import dev.weft.registry.Registry;
import dev.weft.registry.RegistryHealth;
import dev.weft.registry.Watch;
import dev.weft.registry.support.ConnectionHealth;
import dev.weft.registry.support.EventThread;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.options.GetOption;
import io.grpc.Status;

import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * {@link Registry} kept in etcd ({@code etcd://h1:2379,h2:2379,...}), through jetcd. Each registration is a key under
 * {@code /weft/v1/services/SERVICE/ID} bound to a lease the registration keeps alive ({@link EtcdRegistration}); each
 * watched service is one etcd watch on that prefix, resumed from the last revision seen ({@link ServiceWatch}). The
 * key layout is in {@link KeyLayout} and docs/operations.md.
 *
 * <p>Threading: one daemon thread per registry, "weft-registry-etcd" (the event thread), owns all state of
 * registrations and watches, runs their timers and calls listeners. jetcd completes its futures and watch callbacks on
 * its own threads; every completion hops to the event thread, which never blocks. The only blocking call is
 * {@link Registration#close()}, which waits up to {@link #DEREGISTER_TIMEOUT} on the caller's thread for etcd to
 * revoke the lease.
 *
 * <p>Failure behaviour matches the {@code weft://} client: while etcd is unreachable (or has no quorum) keep-alives
 * retry with backoff and watchers keep their last list (no callback); when it answers again watches resume from their
 * revision and registrations renew the same lease, or register again under a new lease after an outage as long as
 * their TTL.
 */
public final class EtcdRegistry implements Registry {
    static final System.Logger LOG = System.getLogger(EtcdRegistry.class.getName());
    /**
     * gRPC announces at INFO, on stderr, that epoll is available, once per process: a line in every sidecar's output
     * that says nothing about Weft. Held here because java.util.logging keeps loggers only weakly.
     */
    private static final java.util.logging.Logger GRPC_TCP_METRICS = quietened("io.grpc.netty.TcpMetrics");
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
    static final Duration DEREGISTER_TIMEOUT = Duration.ofSeconds(1);
    static final Duration MIN_TTL = Duration.ofMillis(100);
    static final Duration MAX_TTL = Duration.ofMinutes(10);
    /** How often a client with nothing else to say checks that etcd answers, for {@link #health()}. */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);
    /**
     * How often it checks while etcd is unreachable: a lease that survived the outage has only its TTL left once etcd
     * is back, so the sooner the client notices, the likelier it renews it before it runs out.
     */
    static final Duration OUTAGE_PROBE_INTERVAL = Duration.ofMillis(250);
    /** How long etcd may stay unreachable before the client gets a fresh connection; see {@link #recycleClient}. */
    static final Duration RECYCLE_AFTER = Duration.ofSeconds(5);

    final EtcdSettings settings;
    final KeyLayout keys;
    final ConnectionHealth health;
    private volatile Client client;
    private final EventThread events;
    private final Set<EtcdRegistration> registrations = ConcurrentHashMap.newKeySet();
    // Event thread only.
    private final Map<String, ServiceWatch> watches = new HashMap<>();
    private boolean probing;
    private long unreachableSinceNanos;
    private long recycledAtNanos;
    private volatile boolean closed;

    public EtcdRegistry(URI uri) {
        this(EtcdSettings.parse(uri));
    }

    EtcdRegistry(EtcdSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.keys = new KeyLayout(settings.root());
        this.health = new ConnectionHealth("etcd", settings.target());
        this.client = settings.newClient(CALL_TIMEOUT);
        this.events = new EventThread("weft-registry-etcd-" + settings.target());
        events.every(this::probe, Duration.ZERO, OUTAGE_PROBE_INTERVAL);
    }

    @Override
    public Registration register(Endpoint endpoint, Duration ttl) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("ttl out of range: " + ttl + " (expected " + MIN_TTL + ".." + MAX_TTL
                    + "; etcd counts whole seconds and rounds up)");
        }
        KeyLayout.checkEndpoint(endpoint);
        requireOpen();
        EtcdRegistration registration = new EtcdRegistration(this, endpoint, ttl);
        registrations.add(registration);
        registration.start();
        return registration;
    }

    @Override
    public Watch watch(String service, EndpointListener listener) {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(listener, "listener");
        KeyLayout.checkService(service);
        requireOpen();
        ServiceWatch.Subscriber subscriber = new ServiceWatch.Subscriber(this, service, listener);
        onEvents(() -> watches.computeIfAbsent(service, s -> new ServiceWatch(this, s)).add(subscriber));
        return subscriber;
    }

    /** Event thread: drops a closed watch's listener, and the etcd watch with its last listener. */
    void unwatch(ServiceWatch.Subscriber subscriber) {
        onEvents(() -> {
            ServiceWatch watch = watches.get(subscriber.service());
            if (watch != null && watch.remove(subscriber)) {
                watches.remove(subscriber.service());
            }
        });
    }

    void forget(EtcdRegistration registration) {
        registrations.remove(registration);
    }

    @Override
    public void putPolicy(String name, String document) throws java.io.IOException {
        if (name == null || !name.matches("[A-Za-z0-9._-]{1,128}")) {
            throw new IllegalArgumentException("invalid policy name '" + name + "' (expected 1-128 letters, digits, '.', '_' or '-')");
        }
        requireOpen();
        try {
            call(() -> client().getKVClient().put(keys.policyKey(name),
                    io.etcd.jetcd.ByteSequence.from(document, java.nio.charset.StandardCharsets.UTF_8))).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.IOException("interrupted while storing policy '" + name + "'", e);
        } catch (ExecutionException e) {
            failed("put policy " + name, e);
            throw new java.io.IOException(describe("put policy '" + name + "'", e), unwrap(e));
        }
    }

    @Override
    public Watch watchPolicies(dev.weft.registry.PolicyListener listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        requireOpen();
        return new PolicyWatch(this, listener);
    }

    @Override
    public RegistryHealth health() {
        return health.snapshot();
    }

    /** The jetcd client to use for the next call; replaced while etcd is unreachable ({@link #recycleClient}). */
    Client client() {
        return client;
    }

    /**
     * Keeps {@link #health()} true to what etcd does now even for a client that only watches a quiet service: a
     * linearizable read needs the cluster's quorum, so it fails exactly when registrations could not be renewed.
     * Runs every {@link #OUTAGE_PROBE_INTERVAL} while etcd is unreachable, so that its return is noticed (and waiting
     * retries woken, see {@link #contact()}) within a fraction of a second; otherwise only after
     * {@link #PROBE_INTERVAL} without any other call getting through.
     */
    private void probe() {
        if (closed) {
            return;
        }
        if (health.connected()) {
            unreachableSinceNanos = 0;
        } else {
            recycleClient();
        }
        if (probing || health.connectedWithin(PROBE_INTERVAL.toNanos())) {
            return;
        }
        probing = true;
        Client c = client;
        call(() -> c.getKVClient().get(keys.probeKey(), GetOption.builder().withCountOnly(true).build()))
                .whenCompleteAsync((r, error) -> {
                    probing = false;
                    if (error == null) {
                        contact();
                    } else {
                        failed("check etcd", error);
                    }
                }, events());
    }

    /**
     * Swaps in a new jetcd client after {@link #RECYCLE_AFTER} of unreachable etcd, and again every
     * {@link #RECYCLE_AFTER} while it stays so. gRPC spaces its reconnection attempts further and further apart (up
     * to two minutes) and jetcd does not let us reset that; a fresh channel dials at once, so after a long outage
     * watches catch up within seconds of etcd's return instead of minutes. All state (leases, revisions, lists) is
     * ours, not the client's, so nothing is lost in the swap; calls in flight on the old client fail and are retried.
     */
    private void recycleClient() {
        long now = System.nanoTime();
        if (unreachableSinceNanos == 0) {
            unreachableSinceNanos = now;
            return;
        }
        if (now - unreachableSinceNanos < RECYCLE_AFTER.toNanos() || now - recycledAtNanos < RECYCLE_AFTER.toNanos()) {
            return;
        }
        recycledAtNanos = now;
        Client old = client;
        client = settings.newClient(CALL_TIMEOUT);
        // Closing cancels the old client's calls, whose handlers run here: do it after this task, not inside it.
        Thread.ofVirtual().name("weft-registry-etcd-close").start(old::close);
    }

    /**
     * Event thread: a call succeeded. If etcd had been unreachable, whatever waits for its backoff to retry (watches,
     * registrations) tries now, so recovery does not wait up to a full backoff step.
     */
    void contact() {
        if (health.success()) {
            unreachableSinceNanos = 0;
            watches.values().forEach(ServiceWatch::wake);
            registrations.forEach(EtcdRegistration::wake);
        }
    }

    /** Stops keep-alives and watches without revoking any lease, as a killed sidecar would. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        registrations.forEach(EtcdRegistration::stopHeartbeats);
        onEvents(() -> {
            watches.values().forEach(ServiceWatch::stop);
            watches.clear();
        });
        // Closed from a listener, the event thread does not wait for itself; its queued tasks find `closed` set.
        events.shutdown();
        client.close();
    }

    boolean isClosed() {
        return closed;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("etcd registry " + settings.target() + " is closed");
        }
    }

    // --- plumbing shared by registrations and watches ---

    /** Runs {@code task} on the event thread; dropped silently once the registry is closed. */
    void onEvents(Runnable task) {
        events.execute(task);
    }

    void schedule(Runnable task, Duration delay, Consumer<ScheduledFuture<?>> timer) {
        events.schedule(task, delay, timer);
    }

    /**
     * The event thread as an executor for jetcd completions. It never throws once the registry is closed: a rejection
     * would otherwise surface on whichever gRPC thread completed the call.
     */
    Executor events() {
        return events;
    }

    /**
     * Starts one etcd call. The call carries a gRPC deadline ({@link CallDeadlines}); the extra local timeout only
     * guarantees that no step of a registration can wait forever whatever jetcd does underneath.
     */
    <T> CompletableFuture<T> call(java.util.function.Supplier<CompletableFuture<T>> call) {
        try {
            return call.get().orTimeout(CALL_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            // jetcd throws instead of failing the future once it is closed.
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Records a failed call in {@link #health()}: unreachable, or reachable but refusing. */
    void failed(String what, Throwable error) {
        String text = describe(what, error);
        if (unreachable(error)) {
            health.failure(text);
        } else {
            health.rejected(text);
        }
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The gRPC code etcd answered with, looking through jetcd's and gRPC's wrappers. */
    static Status.Code code(Throwable error) {
        Throwable t = unwrap(error);
        if (t instanceof TimeoutException) {
            return Status.Code.DEADLINE_EXCEEDED;
        }
        if (t instanceof EtcdException e) {
            try {
                return Status.Code.valueOf(e.getErrorCode().name());
            } catch (IllegalArgumentException unknown) {
                return Status.Code.UNKNOWN;
            }
        }
        return Status.fromThrowable(t).getCode();
    }

    /**
     * Whether the failure means etcd could not be reached (or could not decide, having no leader), as opposed to
     * etcd refusing the request. An authentication that failed because etcd was down counts as unreachable: jetcd
     * reports it as UNAUTHENTICATED with the connection failure as its cause.
     */
    static boolean unreachable(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            Status.Code c = t instanceof TimeoutException ? Status.Code.DEADLINE_EXCEEDED
                    : t instanceof EtcdException || t instanceof io.grpc.StatusRuntimeException
                            || t instanceof io.grpc.StatusException ? code(t) : null;
            if (t instanceof ConnectException) {
                return true;
            }
            if (c == Status.Code.UNAVAILABLE || c == Status.Code.DEADLINE_EXCEEDED || c == Status.Code.CANCELLED
                    || c == Status.Code.INTERNAL || c == Status.Code.UNKNOWN || c == Status.Code.ABORTED) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /** True when etcd says the lease does not exist (expired, revoked, or etcd restored from an older backup). */
    static boolean leaseNotFound(Throwable error) {
        Throwable t = unwrap(error);
        return code(t) == Status.Code.NOT_FOUND && String.valueOf(t.getMessage()).contains("lease not found");
    }

    String describe(String what, Throwable error) {
        Throwable t = unwrap(error);
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        String codePrefix = code(t).name() + ": ";
        while (message.startsWith(codePrefix)) {
            message = message.substring(codePrefix.length());   // jetcd and gRPC both prefix the code
        }
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root != t && root.getMessage() != null && !message.contains(root.getMessage())) {
            message += " (" + root.getMessage() + ")";
        }
        String hint = "";
        if (t instanceof TimeoutException || code(t) == Status.Code.DEADLINE_EXCEEDED) {
            message = "no answer within " + CALL_TIMEOUT.toMillis() + " ms";
        } else if (message.contains("ssl") || message.contains("certificate") || message.contains("handshake")) {
            hint = " (check the TLS options ca, cert and key, and that etcd trusts the CA of the client certificate)";
        } else if (code(t) == Status.Code.UNAVAILABLE && !message.contains("no leader")) {
            hint = " (is etcd running and reachable at " + settings.target() + "?)";
        } else if (code(t) == Status.Code.UNAUTHENTICATED || code(t) == Status.Code.PERMISSION_DENIED
                || code(t) == Status.Code.INVALID_ARGUMENT && message.contains("auth")) {
            hint = " (check user/password and that the user's role may read and write " + keys.root() + "/)";
        }
        return what + ": etcd " + settings.target() + ": " + code(t) + " " + message + hint;
    }

    private static java.util.logging.Logger quietened(String name) {
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
        if (logger.getLevel() == null) {
            logger.setLevel(java.util.logging.Level.WARNING);   // unless an operator configured it
        }
        return logger;
    }

    @Override
    public String toString() {
        return "EtcdRegistry[" + settings + "]";
    }
}
