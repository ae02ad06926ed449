package dev.weft.control.ca;

import dev.weft.control.ControlException;
import dev.weft.registry.ServiceNames;
import dev.weft.registry.support.Durations;

import java.io.IOException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * The mesh's certificate authority, run by the control plane: it turns a join token (or a still valid certificate)
 * and a CSR into a short-lived leaf whose only name is the SPIFFE ID {@code spiffe://<trust-domain>/service/<name>}.
 *
 * <pre>{@code
 * CertificateAuthority ca = CertificateAuthority.open(dataDir.resolve("ca"), CertificateAuthority.Settings.defaults());
 * ControlPlane control = new ControlPlane().authority(ca);   // serves /v1/tokens, /v1/certificates, /v1/trust-bundle
 * String token = ca.createToken("provider", Duration.ofHours(1), false).join().token();   // what the demo would do
 * }</pre>
 *
 * <p>Threading: every operation runs on the CA's own thread ("weft-control-ca"), which alone touches the token file and
 * signs, and completes the returned future there; callers hop back to their own thread. The counters are read from
 * any thread. Keys: the CA's key stays in this object; no method returns or logs it.
 */
public final class CertificateAuthority implements AutoCloseable {
    public static final String DEFAULT_TRUST_DOMAIN = "weft.local";
    public static final Duration DEFAULT_CERT_TTL = Duration.ofHours(24);
    /** Short enough for a test to watch a renewal; production lifetimes are hours or minutes. */
    public static final Duration MIN_CERT_TTL = Duration.ofSeconds(10);
    public static final Duration MAX_CERT_TTL = Duration.ofDays(30);
    /** A SPIFFE trust domain: lower-case letters, digits, '.', '-' and '_' (the SPIFFE ID standard). */
    private static final Pattern TRUST_DOMAIN = Pattern.compile("[a-z0-9._-]{1,255}");
    /** Refusal codes, each counted in {@code weft_control_certificate_refusals_total{reason}}. */
    static final List<String> REFUSALS = List.of("invalid-token", "wrong-service", "invalid-certificate", "bad-csr",
            "bad-request");

    /**
     * How the CA runs.
     *
     * @param caCert       the operator's CA certificate, then its issuers up to the root; null (with {@code caKey}
     *                     null) to use a root generated in the data dir
     * @param overlapRoots a PEM file of roots trusted beside the signing one during a root rotation
     *                     ({@code --ca-overlap-roots}; docs/security.md), or null
     */
    public record Settings(String trustDomain, Duration certTtl, Path caCert, Path caKey, Path overlapRoots) {
        public Settings {
            Objects.requireNonNull(trustDomain, "trustDomain");
            Objects.requireNonNull(certTtl, "certTtl");
            if (!TRUST_DOMAIN.matcher(trustDomain).matches()) {
                throw new IllegalArgumentException("invalid trust domain '" + trustDomain
                        + "' (expected lower-case letters, digits, '.', '-' or '_', e.g. weft.local or"
                        + " prod.example.com)");
            }
            if (certTtl.compareTo(MIN_CERT_TTL) < 0 || certTtl.compareTo(MAX_CERT_TTL) > 0) {
                throw new IllegalArgumentException("certificate TTL " + Durations.format(certTtl)
                        + " out of range (expected " + MIN_CERT_TTL.toSeconds() + "s to " + MAX_CERT_TTL.toDays()
                        + " days)");
            }
            if ((caCert == null) != (caKey == null)) {
                throw new IllegalArgumentException("--ca-cert and --ca-key go together (got only "
                        + (caCert == null ? "--ca-key" : "--ca-cert") + ")");
            }
        }

        /** Without overlap roots: no root rotation in progress. */
        public Settings(String trustDomain, Duration certTtl, Path caCert, Path caKey) {
            this(trustDomain, certTtl, caCert, caKey, null);
        }

        public static Settings defaults() {
            return new Settings(DEFAULT_TRUST_DOMAIN, DEFAULT_CERT_TTL, null, null);
        }

        public Settings withCertTtl(Duration ttl) {
            return new Settings(trustDomain, ttl, caCert, caKey, overlapRoots);
        }

        public Settings withCa(Path cert, Path key) {
            return new Settings(trustDomain, certTtl, cert, key, overlapRoots);
        }

        public Settings withOverlapRoots(Path roots) {
            return new Settings(trustDomain, certTtl, caCert, caKey, roots);
        }
    }

    private final Settings settings;
    private final Issuer issuer;
    /** The roots sidecars trust: the signing root first, then any overlap roots of a rotation. */
    private final List<X509Certificate> bundle;
    private final Leaves leaves;
    private final JoinTokens tokens;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "weft-control-ca");
        t.setDaemon(true);
        return t;
    });
    private final LongAdder issuedWithToken = new LongAdder();
    private final LongAdder renewed = new LongAdder();
    private final LongAdder tokensCreated = new LongAdder();
    private final Map<String, LongAdder> refusals = new ConcurrentHashMap<>();

    private CertificateAuthority(Settings settings, Issuer issuer, List<X509Certificate> bundle, JoinTokens tokens,
                                 Clock clock) {
        this.settings = settings;
        this.issuer = issuer;
        this.bundle = bundle;
        this.tokens = tokens;
        this.leaves = new Leaves(issuer, bundle, settings.trustDomain(), settings.certTtl(), clock);
        for (String code : REFUSALS) {
            refusals.put(code, new LongAdder());
        }
    }

    /**
     * Opens the CA whose files live in {@code dir} (created with mode 0700 if missing): the generated root unless
     * {@code settings} names the operator's, and the join tokens either way.
     *
     * @throws IOException naming the file and what was expected, if a key, certificate or the token file is unusable
     */
    public static CertificateAuthority open(Path dir, Settings settings) throws IOException {
        Clock clock = Clock.systemUTC();
        Issuer.createPrivateDirectory(dir);
        Issuer issuer = settings.caCert() != null ? Issuer.operators(settings.caCert(), settings.caKey())
                : Issuer.generatedIn(dir, settings.trustDomain());
        List<X509Certificate> bundle = new ArrayList<>(List.of(issuer.root()));
        if (settings.overlapRoots() != null) {
            for (X509Certificate root : Issuer.roots(settings.overlapRoots())) {
                if (!bundle.contains(root)) {
                    bundle.add(root);
                }
            }
        }
        return new CertificateAuthority(settings, issuer, List.copyOf(bundle), new JoinTokens(dir, clock), clock);
    }

    public String trustDomain() {
        return settings.trustDomain();
    }

    public Duration certTtl() {
        return settings.certTtl();
    }

    /** One line for the log at start: where the root came from, and until when it is valid. */
    public String describe() {
        return "certificate authority for spiffe://" + settings.trustDomain() + ": " + issuer.origin()
                + "; root '" + issuer.root().getSubjectX500Principal() + "' valid until "
                + issuer.root().getNotAfter().toInstant() + (bundle.size() > 1 ? "; root rotation: also trusting "
                + (bundle.size() - 1) + " overlap root(s) from " + settings.overlapRoots() : "")
                + "; leaf certificates live " + Durations.format(settings.certTtl());
    }

    /** The roots sidecars trust, as PEM: the signing root, then any overlap roots of a root rotation. */
    public String trustBundlePem() {
        return Pem.certificates(bundle);
    }

    /**
     * The pin of the signing root ({@code sha256:} and the hex SHA-256 of its SubjectPublicKeyInfo): what a client
     * passes as {@code --control-ca-pin} to trust this control plane's API over TLS. Any thread.
     */
    public String rootPin() {
        return dev.weft.registry.tls.SpkiPin.of(bundle.getFirst()).toString();
    }

    /**
     * A certificate for the control plane's own API listener ({@code --api-tls}), for a key made here: the caller
     * holds the key in memory only. Valid for the leaves' TTL; the chain goes up to and including the root, so that a
     * client pinning the root finds it in the handshake.
     */
    public CompletableFuture<Serving> issueServing(java.util.Collection<String> dnsNames,
                                                   java.util.Collection<java.net.InetAddress> addresses) {
        return onThread(() -> leaves.serving(Issuer.newEcKeyPair(), dnsNames, addresses));
    }

    /** A serving certificate and its key; {@code chain} starts with the leaf and ends with the root. */
    public record Serving(java.security.PrivateKey key, List<X509Certificate> chain) {
        public X509Certificate leaf() {
            return chain.getFirst();
        }
    }

    /** A join token for {@code service}, valid for {@code ttl}; {@code singleUse}: good for one certificate. */
    public CompletableFuture<JoinToken> createToken(String service, Duration ttl, boolean singleUse) {
        return onThread(() -> {
            checkService(service);
            JoinToken created = tokens.create(service, ttl, singleUse);
            tokensCreated.increment();
            return created;
        });
    }

    /**
     * A certificate for {@code service} for the key in {@code csrPem}, paid for with a join token: 401 for an unknown,
     * expired or used-up token, 403 for another service's, 400 for a CSR that is not acceptable. The token is checked
     * first, so a caller without one never reaches the CSR parser; it is used up only once the certificate is made.
     */
    public CompletableFuture<Issued> issueWithToken(String service, String token, String csrPem) {
        return counted(onThread(() -> {
            checkService(service);
            JoinTokens.Stored stored = tokens.check(token, service);
            PublicKey key = Csrs.publicKey(csrPem);
            Issued issued = leaves.issue(service, key);
            tokens.use(stored);
            issuedWithToken.increment();
            return issued;
        }));
    }

    /**
     * A new certificate for a sidecar that holds a valid one: {@code certificatePem} issued here, unexpired, for
     * {@code service}, and {@code proof} (base64), the current key's signature over the new CSR's DER. Replaying a
     * captured renewal gets the replayer nothing: the new certificate is for a key only the sidecar holds.
     */
    public CompletableFuture<Issued> renew(String service, String certificatePem, String proof, String csrPem) {
        return counted(onThread(() -> {
            checkService(service);
            X509Certificate current = leaves.checkCurrent(certificatePem, service);
            Leaves.checkProof(current, proof, Csrs.der(csrPem));
            Issued issued = leaves.issue(service, Csrs.publicKey(csrPem));
            renewed.increment();
            return issued;
        }));
    }

    /**
     * The service {@code token} was made for, if it is a join token that is known, unexpired and not used up (401
     * {@code invalid-token} otherwise): a sidecar without a certificate registers with it. Nothing is used up, so a
     * single-use token still pays for its one certificate. Any thread.
     */
    public String joinTokenService(String token) {
        return tokens.authenticate(token).service();
    }

    /**
     * The service a sidecar's certificate names, if this CA issued it (or an overlap root signed it) and it is valid
     * now (401 {@code invalid-certificate} otherwise): what a signed request to the API is checked with. Any thread.
     */
    public String certificateService(java.security.cert.X509Certificate leaf) {
        return leaves.serviceOf(leaf);
    }

    /** Counts a request refused before it reached the CA (e.g. a malformed body) under its code. */
    public void refused(String code) {
        LongAdder counter = refusals.get(code);
        if (counter != null) {
            counter.increment();
        }
    }

    /** Prometheus text for the control plane's /metrics. */
    public String metricsText() {
        StringBuilder b = new StringBuilder();
        b.append("# HELP weft_control_certificates_issued_total Certificates issued, by what the sidecar proved itself"
                + " with: a join token, or its current certificate (renewal).\n");
        b.append("# TYPE weft_control_certificates_issued_total counter\n");
        b.append("weft_control_certificates_issued_total{proof=\"token\"} ").append(issuedWithToken.sum()).append('\n');
        b.append("weft_control_certificates_issued_total{proof=\"certificate\"} ").append(renewed.sum()).append('\n');
        b.append("# HELP weft_control_certificate_refusals_total Certificate requests refused, by reason.\n");
        b.append("# TYPE weft_control_certificate_refusals_total counter\n");
        for (String code : REFUSALS) {
            b.append("weft_control_certificate_refusals_total{reason=\"").append(code).append("\"} ")
                    .append(refusals.get(code).sum()).append('\n');
        }
        b.append("# HELP weft_control_join_tokens_created_total Join tokens created.\n");
        b.append("# TYPE weft_control_join_tokens_created_total counter\n");
        b.append("weft_control_join_tokens_created_total ").append(tokensCreated.sum()).append('\n');
        b.append("# HELP weft_control_ca_root_expiry_timestamp_seconds When the root sidecars trust expires.\n");
        b.append("# TYPE weft_control_ca_root_expiry_timestamp_seconds gauge\n");
        b.append("weft_control_ca_root_expiry_timestamp_seconds ")
                .append(issuer.root().getNotAfter().toInstant().getEpochSecond()).append('\n');
        return b.toString();
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }

    private <T> CompletableFuture<T> counted(CompletableFuture<T> result) {
        return result.whenComplete((v, error) -> {
            if (error != null) {
                Throwable cause = error.getCause() != null ? error.getCause() : error;
                if (cause instanceof ControlException e) {
                    refused(e.code());
                }
            }
        });
    }

    private <T> CompletableFuture<T> onThread(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            thread.execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Exception e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new ControlException(503, "shutting-down", "the control plane is stopping"));
        }
        return result;
    }

    private static void checkService(String service) {
        if (!ServiceNames.isValid(service)) {
            throw ControlException.badRequest("invalid service name '" + service + "' (expected " + ServiceNames.RULE
                    + ")");
        }
    }

    /** What a certificate request gets: everything a sidecar needs, in PEM, and never a key. */
    public record Issued(String spiffeId, String serial, Instant notBefore, Instant notAfter, String certificate,
                         String chain, String trustBundle) {
        static Issued of(String spiffeId, X509Certificate leaf, List<X509Certificate> intermediates,
                         List<X509Certificate> bundle) {
            List<X509Certificate> chain = new ArrayList<>();
            chain.add(leaf);
            chain.addAll(intermediates);
            return new Issued(spiffeId, leaf.getSerialNumber().toString(16), leaf.getNotBefore().toInstant(),
                    leaf.getNotAfter().toInstant(), Pem.write(leaf), Pem.certificates(chain),
                    Pem.certificates(bundle));
        }
    }
}
