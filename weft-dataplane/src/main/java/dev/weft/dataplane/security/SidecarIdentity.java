package dev.weft.dataplane.security;

import dev.weft.dataplane.metrics.PrometheusText;
import dev.weft.registry.support.Backoff;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The sidecar's workload identity over time: gets its first certificate with the join token from {@code --token-file},
 * keeps the current one in memory ({@link #current()}), and renews it when a third of its lifetime is left, proving
 * itself with the certificate it holds. Failures are retried with backoff (jittered, capped at a tenth of the
 * lifetime so that several retries fit in the last third), logged when the reason changes, and counted in /metrics.
 * A renewal the CA refuses (say, the certificate expired while the control plane was away) falls back to the token
 * file, read again each time, so an operator can drop a fresh token there.
 *
 * <p>In {@link MtlsMode#STRICT} the first certificate is fetched on the starting thread before the sidecar binds any
 * listener, and a refusal stops the start with the control plane's reason; an unreachable control plane is retried
 * for {@link #STRICT_START_TIMEOUT}. In {@link MtlsMode#PERMISSIVE} everything happens in the background.
 *
 * <p>Thread: one daemon thread, "weft-identity", runs every fetch after the start and every timer; {@link #current()},
 * {@link #describe()} and {@link #metrics} read volatile fields from any thread. Neither the key nor the token is
 * ever logged, shown or written.
 */
public final class SidecarIdentity implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(SidecarIdentity.class.getName());
    public static final Duration STRICT_START_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration MAX_RETRY = Duration.ofSeconds(30);

    private final String service;
    private final Path tokenFile;
    private final MtlsMode mode;
    private final CertificateClient client;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "weft-identity");
        t.setDaemon(true);
        return t;
    });
    private final LongAdder obtained = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private volatile WorkloadCertificate current;
    private volatile String lastError;
    // The identity thread only (and the starting thread before it runs anything).
    private Backoff backoff = new Backoff();

    private SidecarIdentity(String service, String registryUrl, Path tokenFile, MtlsMode mode) {
        this.service = service;
        this.tokenFile = tokenFile;
        this.mode = mode;
        this.client = new CertificateClient(registryUrl, service);
    }

    /**
     * Starts the identity of a sidecar: nothing to do (null) in {@link MtlsMode#OFF} or without a token file outside
     * strict mode; in strict mode returns only with a certificate.
     *
     * @throws IdentityException in strict mode, saying exactly why there is no certificate
     */
    public static SidecarIdentity start(String service, String registryUrl, Path tokenFile, MtlsMode mode) {
        if (mode == MtlsMode.OFF) {
            if (tokenFile != null) {
                LOG.log(System.Logger.Level.INFO, "weft: --mtls off: no certificate is requested; --token-file "
                        + tokenFile + " only proves the registration to the control plane");
            }
            return null;
        }
        if (tokenFile == null) {
            return null; // SidecarConfig refuses --mtls strict without one
        }
        SidecarIdentity identity = new SidecarIdentity(service, registryUrl, tokenFile, mode);
        if (mode == MtlsMode.STRICT) {
            try {
                identity.firstCertificate();
            } catch (RuntimeException e) {
                identity.close();
                throw e;
            }
            identity.scheduleRenewal();
        } else {
            identity.thread.execute(identity::attempt);
        }
        return identity;
    }

    /** The certificate in force, or null before the first one arrives. */
    public WorkloadCertificate current() {
        return current;
    }

    public MtlsMode mode() {
        return mode;
    }

    /** False only in strict mode without a certificate valid now: the sidecar cannot be part of the mesh. */
    public boolean ready() {
        WorkloadCertificate c = current;
        return mode != MtlsMode.STRICT || (c != null && c.isValidAt(Instant.now()));
    }

    /** Why there is no valid certificate, for /ready. */
    public String notReadyReason() {
        String error = lastError;
        return "no valid certificate" + (error == null ? "" : ": " + error);
    }

    /** The strict start: on this thread, refusals fail at once, an unreachable control plane is retried a while. */
    private void firstCertificate() {
        long deadline = System.nanoTime() + STRICT_START_TIMEOUT.toNanos();
        while (true) {
            Exception retryable;
            try {
                accept(client.issue(readToken()));
                return;
            } catch (IdentityException e) {
                if (e.status() < 500) {
                    throw new IdentityException(e.status(), "no certificate for service '" + service + "', so the"
                            + " sidecar does not serve (--mtls strict): " + e.getMessage());
                }
                retryable = e;   // the control plane is stopping or cannot write: it may answer in a moment
            } catch (IOException e) {
                retryable = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IdentityException("interrupted while getting the first certificate", e);
            }
            Duration wait = backoff.next();
            if (System.nanoTime() + wait.toNanos() > deadline) {
                throw new IdentityException("no certificate for service '" + service + "' after trying for "
                        + STRICT_START_TIMEOUT.toSeconds() + " s, so the sidecar does not serve (--mtls strict): "
                        + retryable.getMessage(), retryable);
            }
            sleep(wait);
        }
    }

    /** One fetch on the identity thread, then the next one scheduled: a renewal when it worked, a retry when not. */
    private void attempt() {
        try {
            WorkloadCertificate c = current;
            WorkloadCertificate next = null;
            if (c != null && c.isValidAt(Instant.now())) {
                try {
                    next = client.renew(c);
                } catch (IdentityException e) {
                    if (!e.refused()) {
                        throw e;
                    }
                    note("renewal refused, trying the join token: " + e.getMessage());
                }
            }
            accept(next != null ? next : client.issue(readToken()));
            scheduleRenewal();
        } catch (IOException | IdentityException e) {
            failures.increment();
            note(e.getMessage());
            Duration wait = backoff.next();
            thread.schedule(this::attempt, wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // A bug must not end renewals: log it with its stack, count it, and try again later.
            failures.increment();
            LOG.log(System.Logger.Level.ERROR, "weft: certificate renewal failed", e);
            lastError = e.toString();
            thread.schedule(this::attempt, backoff.next().toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void accept(WorkloadCertificate c) {
        current = c;
        obtained.increment();
        lastError = null;
        Duration life = Duration.between(c.receivedAt(), c.notAfter());
        Duration cap = life.dividedBy(10);
        backoff = new Backoff(Duration.ofMillis(100), cap.compareTo(MAX_RETRY) > 0 ? MAX_RETRY
                : cap.compareTo(Duration.ofMillis(100)) < 0 ? Duration.ofMillis(100) : cap);
        LOG.log(System.Logger.Level.INFO, "weft: got " + c + " (renewing at " + c.renewAt() + ")");
    }

    private void scheduleRenewal() {
        long delay = Math.max(0, Duration.between(Instant.now(), current.renewAt()).toMillis());
        thread.schedule(this::attempt, delay, TimeUnit.MILLISECONDS);
    }

    private String readToken() {
        String token;
        try {
            token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IdentityException(0, "cannot read --token-file " + tokenFile + ": " + e);
        }
        if (token.isEmpty()) {
            throw new IdentityException(0, "--token-file " + tokenFile + " is empty (expected a join token from"
                    + " ./weft token create --service " + service + ")");
        }
        return token;
    }

    /** Logs a failure once per distinct reason: a control plane away for an hour is one line, not thousands. */
    private void note(String reason) {
        if (!reason.equals(lastError)) {
            LOG.log(System.Logger.Level.WARNING, "weft: certificate for service '" + service + "': " + reason);
        }
        lastError = reason;
    }

    /** For /config: who this sidecar is and until when; never the key or the token. */
    public Map<String, Object> describe() {
        return describe(mode, tokenFile, current, obtained.sum(), failures.sum(), lastError);
    }

    /** The /config section of a sidecar without a running identity. */
    public static Map<String, Object> describeNone(MtlsMode mode, Path tokenFile) {
        return describe(mode, tokenFile, null, 0, 0, null);
    }

    private static Map<String, Object> describe(MtlsMode mode, Path tokenFile, WorkloadCertificate c, long obtained,
                                                long failures, String lastError) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mtls", mode.label());
        // MeshTls dials and accepts mTLS exactly while a certificate is held (docs/security.md).
        m.put("meshLinkEncrypted", c != null);
        m.put("tokenFile", tokenFile == null ? null : tokenFile.toString());
        m.put("spiffeId", c == null ? null : c.spiffeId());
        m.put("serial", c == null ? null : c.serial());
        m.put("notBefore", c == null ? null : c.certificate().getNotBefore().toInstant().toString());
        m.put("notAfter", c == null ? null : c.notAfter().toString());
        m.put("renewAt", c == null ? null : c.renewAt().toString());
        m.put("issuer", c == null ? null : c.certificate().getIssuerX500Principal().getName());
        m.put("certificatesObtained", obtained);
        m.put("failures", failures);
        m.put("lastError", lastError);
        return m;
    }

    /** Prometheus text for /metrics. */
    public String metrics() {
        WorkloadCertificate c = current;
        PrometheusText p = new PrometheusText();
        p.gauge("weft_identity_certificate_valid", "1 while the sidecar holds a certificate valid now.",
                c != null && c.isValidAt(Instant.now()) ? 1 : 0, "spiffe_id", c == null ? "" : c.spiffeId());
        p.gauge("weft_identity_certificate_expiry_timestamp_seconds", "When the current certificate expires (0: none).",
                c == null ? 0 : c.notAfter().getEpochSecond());
        p.counter("weft_identity_certificate_requests_total", "Certificate requests to the control plane, by result.",
                obtained.sum(), "result", "ok");
        p.counter("weft_identity_certificate_requests_total", "", failures.sum(), "result", "failed");
        return p.toString();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdentityException("interrupted while getting the first certificate", e);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        client.close();
    }
}
