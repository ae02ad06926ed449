package dev.weft.dataplane;

import dev.weft.control.ControlPlane;
import dev.weft.control.ca.CertificateAuthority;
import dev.weft.control.ca.Pem;
import dev.weft.dataplane.security.MtlsMode;
import dev.weft.dataplane.security.SidecarIdentity;
import dev.weft.dataplane.security.WorkloadCertificate;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A mesh with mTLS on loopback for tests: the control plane with its CA (certificate lifetime chosen by the test),
 * sidecars that get their certificate with a join token, and certificates a test makes itself with BouncyCastle
 * (signed by the mesh's root, or by nobody) to knock on a sidecar's inbound port. Close it to stop everything.
 */
final class TlsMesh implements AutoCloseable {
    final Path dir;
    CertificateAuthority ca;
    ControlPlane control;
    final int controlPort;
    /**
     * The control plane's port, held until the mesh closes: stopped for a restart, the control plane frees it, and a
     * sidecar's listener binding port 0 or its reconnecting registry client could otherwise be given it meanwhile.
     * The control plane binds it all the same (its listener allows address reuse).
     */
    private final HeldPort heldControlPort = LoopbackPorts.held();
    private final List<AutoCloseable> started = new ArrayList<>();
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** Whether the control plane serves its API over TLS ({@code --api-tls on}); sidecars then pin its CA. */
    private final boolean apiTls;

    TlsMesh(Path dir, Duration certTtl) throws Exception {
        this(dir, certTtl, false);
    }

    TlsMesh(Path dir, Duration certTtl, boolean apiTls) throws Exception {
        this.dir = dir;
        this.apiTls = apiTls;
        ca = CertificateAuthority.open(dir.resolve("ca"), CertificateAuthority.Settings.defaults().withCertTtl(certTtl));
        control = new ControlPlane().authority(ca)
                .apiTls(apiTls ? dev.weft.control.ApiTls.Mode.ON : dev.weft.control.ApiTls.Mode.OFF, List.of());
        controlPort = control.start(new InetSocketAddress("127.0.0.1", heldControlPort.port()), dir.resolve("data"))
                .getPort();
    }

    /**
     * Stops the control plane and starts it again on the same port and data dir with other CA settings (a root
     * rotation's steps): registrations, tokens and the generated root's files carry over.
     */
    void restartControlPlane(CertificateAuthority.Settings settings) throws Exception {
        control.close();
        ca = CertificateAuthority.open(dir.resolve("ca"), settings);
        control = new ControlPlane().authority(ca)
                .apiTls(apiTls ? dev.weft.control.ApiTls.Mode.ON : dev.weft.control.ApiTls.Mode.OFF, List.of());
        control.start(new InetSocketAddress("127.0.0.1", controlPort), dir.resolve("data"));
    }

    /** {@code weft://}, or with the API over TLS {@code weft+tls://} pinning the CA's root. */
    String registryUrl() {
        return apiTls ? "weft+tls://127.0.0.1:" + controlPort + "?ca-pin=" + ca.rootPin()
                : "weft://127.0.0.1:" + controlPort;
    }

    /** The operator's credentials (the control plane's generated admin.token): what a test registers with by hand. */
    dev.weft.registry.auth.ControlCredentials operator() {
        return dev.weft.registry.auth.ControlCredentials.bearerFile(
                dir.resolve("data").resolve(dev.weft.control.ca.AdminToken.FILE));
    }

    Path tokenFile(String service) throws Exception {
        String token = ca.createToken(service, Duration.ofMinutes(5), false).join().token();
        return Files.writeString(Files.createTempFile(dir, "token", ".txt"), token);
    }

    TestApp app() throws Exception {
        TestApp app = new TestApp();
        started.add(app);
        return app;
    }

    /**
     * A sidecar with its own certificate for {@code service}; with {@code upstream}, a listener for that service.
     *
     * @param mode its {@code --mtls}; null: none set, the default
     */
    Sidecar sidecar(String service, String mode, TestApp app, String upstream) throws Exception {
        SidecarConfig.Builder b = SidecarConfig.builder(service, app.address()).instanceId(service + "-1")
                .inbound(new InetSocketAddress("127.0.0.1", 0)).admin(new InetSocketAddress("127.0.0.1", 0))
                .registry(registryUrl()).leaseTtl(Duration.ofSeconds(2)).workers(2).meshConnectionsPerPeer(2)
                .queueSize(2048).queueTimeout(Duration.ofSeconds(10)).tokenFile(tokenFile(service));
        if (mode != null) {
            b.mtls(mode);
        }
        if (upstream != null) {
            b.upstreams(Map.of(upstream, new InetSocketAddress("127.0.0.1", 0)));
        }
        Sidecar s = new Sidecar(b.build());
        started.add(s);
        s.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!s.isReady()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("sidecar " + service + " not ready within 15 s");
            }
            Thread.sleep(10);
        }
        return s;
    }

    /** A real workload certificate from the mesh's CA, held by an identity this mesh closes. */
    WorkloadCertificate certificate(String service) throws Exception {
        return identity(service).current();
    }

    /** A real workload identity from the mesh's CA, renewed like a sidecar's, closed with this mesh. */
    SidecarIdentity identity(String service) throws Exception {
        SidecarIdentity id = SidecarIdentity.start(service, registryUrl(), tokenFile(service), MtlsMode.STRICT);
        started.add(id);
        return id;
    }

    /** The mesh's root and its key, read from the CA's data dir as a test may (the sidecars never see the key). */
    X509Certificate root() throws Exception {
        return Pem.readCertificates(Files.readString(dir.resolve("ca").resolve("root.pem")), "root").getFirst();
    }

    private PrivateKey rootKey() throws Exception {
        return Pem.readPrivateKey(Files.readString(dir.resolve("ca").resolve("root.key")), "root key");
    }

    static KeyPair keyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    /**
     * A leaf for {@code keys} naming {@code spiffeId}, valid between the two instants, signed by the mesh's root
     * ({@code selfSigned} false) or by its own key.
     */
    X509Certificate leaf(KeyPair keys, String spiffeId, Instant notBefore, Instant notAfter, boolean selfSigned)
            throws Exception {
        X509Certificate root = root();
        X500Name subject = new X500Name("CN=test-leaf");
        X500Name issuer = selfSigned ? subject : X500Name.getInstance(root.getSubjectX500Principal().getEncoded());
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(System.nanoTime()),
                Date.from(notBefore), Date.from(notAfter), subject, keys.getPublic());
        b.addExtension(Extension.subjectAlternativeName, false,
                new GeneralNames(new GeneralName(GeneralName.uniformResourceIdentifier, spiffeId)));
        PrivateKey signer = selfSigned ? keys.getPrivate() : rootKey();
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
    }

    String admin(Sidecar s, String path) throws Exception {
        int port = s.boundAddresses().get("admin").getPort();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /** One sample of a counter or gauge from a sidecar's /metrics (0 when absent). */
    long metric(Sidecar s, String nameAndLabels) throws Exception {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(nameAndLabels) + " (\\d+)$").matcher(admin(s, "/metrics"));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable c : started.reversed()) {
            c.close();
        }
        control.close();
        http.close();
        heldControlPort.close();
    }
}
