package dev.weft.control.ca;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlPlane;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.ExtensionsGenerator;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

import javax.security.auth.x500.X500Principal;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.AlgorithmParameterSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A control plane with its CA on a loopback port the OS picks, and the client side of the identity API as a sidecar
 * would speak it, for tests: keys, CSRs (with whatever names a hostile caller puts in), JSON calls, and openssl.
 */
final class CaFixture implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    final Path dir;
    final CertificateAuthority ca;
    final ControlPlane control;
    final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    CaFixture(Path dir, CertificateAuthority.Settings settings) throws Exception {
        this(dir, settings, "127.0.0.1");
    }

    CaFixture(Path dir, CertificateAuthority.Settings settings, String host) throws Exception {
        this.dir = dir;
        this.ca = CertificateAuthority.open(dir.resolve("data/ca"), settings);
        this.control = new ControlPlane().authority(ca);
        InetSocketAddress bound = control.start(new InetSocketAddress(host, 0), dir.resolve("data"));
        this.base = URI.create("http://" + host + ":" + bound.getPort());
    }

    String token(String service, Duration ttl, boolean singleUse) {
        return ca.createToken(service, ttl, singleUse).join().token();
    }

    /** A status and the parsed JSON body. */
    record Answer(int status, JsonNode body, String text) {}

    /** The operator token the control plane generated in its data dir. */
    String operatorToken() {
        return dev.weft.registry.auth.ControlCredentials.readToken(dir.resolve("data").resolve(AdminToken.FILE));
    }

    /** POSTs as the operator (the routes that need no credentials ignore them). */
    Answer post(String path, Map<String, ?> body) throws Exception {
        return post(path, body, "Bearer " + operatorToken());
    }

    /** @param authorization the Authorization header, or null to send none */
    Answer post(String path, Map<String, ?> body, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(5));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<String> r = http.send(b
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(),
                HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), JSON.readTree(r.body()), r.body());
    }

    /** Any request, with {@code authorization} (or none when null); the answer's JSON, or null for another body. */
    Answer send(String method, String path, String body, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(5))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json;
        try {
            json = JSON.readTree(r.body());
        } catch (java.io.IOException e) {
            json = null;
        }
        return new Answer(r.statusCode(), json, r.body());
    }

    String get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    Answer issue(String service, String token, String csr) throws Exception {
        return post("/v1/certificates", Map.of("service", service, "token", token, "csr", csr));
    }

    static KeyPair keys(String algorithm, AlgorithmParameterSpec spec, int bits) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
        if (spec != null) {
            g.initialize(spec);
        } else if (bits > 0) {
            g.initialize(bits);
        }
        return g.generateKeyPair();
    }

    static KeyPair p256() {
        return Issuer.newEcKeyPair();
    }

    /** A CSR signed by {@code keys}, asking for names the CA must ignore: CN=admin and SANs of another service. */
    static PKCS10CertificationRequest csr(KeyPair keys, String signatureAlgorithm) throws Exception {
        ExtensionsGenerator requested = new ExtensionsGenerator();
        requested.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[]{
                new GeneralName(GeneralName.dNSName, "evil.example"),
                new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://weft.local/service/admin")}));
        return new JcaPKCS10CertificationRequestBuilder(new X500Principal("CN=admin"), keys.getPublic())
                .addAttribute(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest, requested.generate())
                .build(new JcaContentSignerBuilder(signatureAlgorithm).build(keys.getPrivate()));
    }

    static String csrPem(KeyPair keys) throws Exception {
        return Pem.write(csr(keys, "SHA256withECDSA"));
    }

    String openssl(String... args) throws Exception {
        return openssl(dir, args);
    }

    /** Runs openssl with the arguments in {@code dir}; its output (stdout and stderr), failing on a non-zero exit. */
    static String openssl(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("openssl " + String.join(" ", args) + " took over 20 s");
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("openssl " + String.join(" ", args) + " exited " + p.exitValue() + ": " + out);
        }
        return out;
    }

    /**
     * A non-loopback IPv4 address of this machine to bind a control plane to, so that requests come from elsewhere
     * than loopback; the test is skipped (not failed) on a machine without one.
     */
    static String outsideAddress() throws Exception {
        java.net.InetAddress outside = null;
        for (java.net.NetworkInterface nic : java.util.Collections.list(
                java.net.NetworkInterface.getNetworkInterfaces())) {
            for (java.net.InetAddress a : java.util.Collections.list(nic.getInetAddresses())) {
                if (a instanceof java.net.Inet4Address && !a.isLoopbackAddress() && nic.isUp()) {
                    outside = a;
                }
            }
        }
        org.assertj.core.api.Assumptions.assumeThat(outside).as("a non-loopback IPv4 address on this machine"
                + " (hostname -I): without one no request can come from anywhere but loopback").isNotNull();
        return outside.getHostAddress();
    }

    Path write(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text, StandardCharsets.US_ASCII);
    }

    @Override
    public void close() {
        control.close();
        http.close();
    }
}
