package dev.weft.registry.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How a client trusts a control plane that serves its API over TLS ({@code weft+tls://}, docs/security.md): the CAs
 * of a PEM bundle ({@code --control-ca FILE}: the control plane's {@code GET /v1/trust-bundle}, or its
 * {@code DATA_DIR/ca/root.pem}), a pin on the CA's key ({@code --control-ca-pin sha256:...}), both, or neither (the
 * JDK's default trust store, which knows no control plane's generated root: the handshake then fails with a message
 * naming both flags).
 *
 * <p>The pin replaces only the trust anchor: the CA certificate the server sends in its chain whose key matches the pin
 * becomes the anchor, and the chain is then verified as any other (signatures, validity, the host name or IP address
 * against the serving certificate's SANs) by the JDK's PKIX trust manager. {@link #adopt} adds the roots of a trust
 * bundle fetched over a connection verified so, which keeps a pinned client working through a root rotation.
 *
 * <p>Thread: any. The TLS contexts are made once, on first use; adopted roots are read by each handshake.
 */
public final class ControlTrust {
    /** Only TLS 1.3: every client of the API is a JDK of this project or a current browser, curl or openssl. */
    public static final String PROTOCOL = "TLSv1.3";

    private final List<X509Certificate> bundle;
    private final Path bundleFile;
    private final SpkiPin pin;
    private final ControlTrustManager manager;
    private SslContext netty;
    private SSLContext jdk;

    private ControlTrust(List<X509Certificate> bundle, Path bundleFile, SpkiPin pin) {
        this.bundle = List.copyOf(bundle);
        this.bundleFile = bundleFile;
        this.pin = pin;
        this.manager = new ControlTrustManager(this.bundle, bundleFile, pin);
    }

    /** The JDK's default trust store only: what a {@code weft+tls://} URL without a CA or a pin gets. */
    public static ControlTrust system() {
        return new ControlTrust(List.of(), null, null);
    }

    /**
     * @param caFile a PEM bundle of CA certificates, or null
     * @param pin    {@code sha256:HEX}, or null
     * @throws IllegalArgumentException naming the file or the pin, and what was expected
     */
    public static ControlTrust of(Path caFile, String pin) {
        SpkiPin parsed = null;
        if (pin != null) {
            try {
                parsed = SpkiPin.parse(pin);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--control-ca-pin: " + e.getMessage(), e);
            }
        }
        // One trust per (file, pin) in a process: the registry client, the certificate client and the span exporter
        // each parse the same URL, and a bundle one of them adopts after a root rotation must reach the others.
        // A file that fails to parse is not remembered, so the next call says why again.
        SpkiPin anchorPin = parsed;
        String key = (caFile == null ? "" : caFile.toAbsolutePath().normalize().toString()) + "\n"
                + (parsed == null ? "" : parsed.toString());
        return SHARED.computeIfAbsent(key,
                k -> new ControlTrust(caFile == null ? List.of() : readBundle(caFile), caFile, anchorPin));
    }

    /** Every trust made by {@link #of}, by file and pin: a handful in a process, one per distinct flag value. */
    private static final ConcurrentHashMap<String, ControlTrust> SHARED = new ConcurrentHashMap<>();

    /** Whether a CA bundle or a pin was given (else: the JDK's default trust). */
    public boolean configured() {
        return bundleFile != null || pin != null;
    }

    public Path caFile() {
        return bundleFile;
    }

    /** The pin, as {@code sha256:HEX}, or null. */
    public String pin() {
        return pin == null ? null : pin.toString();
    }

    /**
     * Also trusts the roots in {@code pem} (a {@code /v1/trust-bundle} or a certificate answer's {@code trustBundle})
     * from now on, beside the configured ones: call it only with a bundle read over a connection this trust verified.
     *
     * @return how many roots are trusted by adoption now
     * @throws IllegalArgumentException if {@code pem} holds no certificate
     */
    public int adopt(String pem) {
        List<X509Certificate> roots = parse(pem, "the control plane's trust bundle");
        manager.adopt(roots);
        return roots.size();
    }

    /** For Netty clients ({@code SmallHttpClient}): TLS 1.3, the host name checked against the SANs. */
    public synchronized SslContext netty() throws SSLException {
        if (netty == null) {
            netty = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).protocols(PROTOCOL)
                    .endpointIdentificationAlgorithm("HTTPS").trustManager(manager).build();
        }
        return netty;
    }

    /** For the JDK's {@code HttpClient} (the operator commands), which checks the host name itself. */
    public synchronized SSLContext jdk() {
        if (jdk == null) {
            try {
                SSLContext context = SSLContext.getInstance(PROTOCOL);
                context.init(null, new javax.net.ssl.TrustManager[]{manager}, null);
                jdk = context;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("this JVM cannot make a " + PROTOCOL + " context", e);
            }
        }
        return jdk;
    }

    @Override
    public String toString() {
        return manager.describe();
    }

    private static List<X509Certificate> readBundle(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--control-ca " + file + " cannot be read: " + e.getMessage()
                    + " (expected a PEM file of CA certificates: the control plane's /v1/trust-bundle or"
                    + " DATA_DIR/ca/root.pem)", e);
        }
        return parse(text, "--control-ca " + file);
    }

    static List<X509Certificate> parse(String pem, String what) {
        List<X509Certificate> out = new ArrayList<>();
        // The JDK's parser calls an empty or non-PEM file "No certificate data found"; say what was expected instead.
        if (!pem.contains("-----BEGIN CERTIFICATE-----")) {
            throw new IllegalArgumentException(what + " holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)");
        }
        try {
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                out.add((X509Certificate) c);
            }
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException(what + " is not a PEM bundle of certificates: " + e.getMessage(), e);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(what + " holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)");
        }
        for (X509Certificate c : out) {
            if (c.getBasicConstraints() < 0) {
                throw new IllegalArgumentException(what + " holds " + c.getSubjectX500Principal()
                        + ", which is not a CA certificate (expected the control plane's CA, basicConstraints CA:TRUE)");
            }
        }
        return out;
    }
}
