package dev.weft.dataplane.security;

import dev.weft.registry.http.SmallHttpClient;
import dev.weft.registry.support.JsonValues;
import dev.weft.registry.tls.ControlTrust;
import dev.weft.registry.weft.ControlPlaneUrl;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

import javax.security.auth.x500.X500Principal;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Asks the control plane ({@code POST /v1/certificates}, docs/security.md) for a certificate: with the join token the
 * first time, with the current certificate and a proof signed by its key after that. Each request carries a new EC
 * P-256 key pair made here; the private key stays in the returned {@link WorkloadCertificate}, in memory.
 *
 * <p>Thread: blocking calls on the caller's thread (the identity thread, or the starting thread in strict mode), each
 * bounded by {@link #CALL_TIMEOUT}; the HTTP exchange itself runs on the client's own event loop
 * ("weft-http-identity"), which copies every answer into a byte array and releases its buffers.
 */
final class CertificateClient implements AutoCloseable {
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);
    private static final Map<String, String> JSON = Map.of("Content-Type", "application/json");

    private final String registryUrl;
    private final URI endpoint;
    private final String service;
    private final SmallHttpClient http;
    /** A {@code weft+tls://} control plane's trust by pin or CA file, which adopts each answer's bundle; else null. */
    private final ControlTrust trust;
    /** EC P-256 (why: the control plane's {@code Issuer}); one generator, used by one thread at a time. */
    private final KeyPairGenerator keyPairs;

    /**
     * @param registryUrl the control plane, {@code weft://HOST:PORT} or {@code weft+tls://...} with its trust
     *                    ({@link ControlPlaneUrl}): it is the CA
     */
    CertificateClient(String registryUrl, String service) {
        ControlPlaneUrl url = ControlPlaneUrl.parse(registryUrl);
        this.registryUrl = url.toString();   // without the trust options: what messages show
        this.endpoint = url.resolve("/v1/certificates");
        this.http = url.newClient("identity", Duration.ofSeconds(1));
        this.trust = url.tls() && url.trust().configured() ? url.trust() : null;
        this.service = service;
        try {
            keyPairs = KeyPairGenerator.getInstance("EC");
            keyPairs.initialize(new ECGenParameterSpec("secp256r1"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot make EC P-256 keys", e);
        }
    }

    /** A first certificate, paid for with a join token. */
    WorkloadCertificate issue(String token) throws IOException, InterruptedException {
        KeyPair keys = keyPairs.generateKeyPair();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("service", service);
        body.put("token", token);
        body.put("csr", pem(csr(keys)));
        return call(body, keys);
    }

    /** The next certificate, proven by the current one's key. */
    WorkloadCertificate renew(WorkloadCertificate current) throws IOException, InterruptedException {
        KeyPair keys = keyPairs.generateKeyPair();
        PKCS10CertificationRequest csr = csr(keys);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("service", service);
        body.put("certificate", pem(current.certificate()));
        body.put("proof", Base64.getEncoder().encodeToString(sign(current, csr.getEncoded())));
        body.put("csr", pem(csr));
        return call(body, keys);
    }

    private WorkloadCertificate call(Map<String, Object> body, KeyPair keys) throws IOException, InterruptedException {
        byte[] json = JsonValues.write(body, false);
        SmallHttpClient.Response r;
        try {
            r = http.sendBlocking("POST", endpoint, JSON, json, 0, json.length, CALL_TIMEOUT);
        } catch (javax.net.ssl.SSLHandshakeException e) {
            if (e.getCause() instanceof java.security.cert.CertificateException) {
                // Its certificate is not one --control-ca/--control-ca-pin trusts: trying again will not change that.
                throw new IdentityException("control plane " + registryUrl + " is not trusted: " + e.getMessage(), e);
            }
            throw new IOException("control plane " + registryUrl + " unreachable: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IOException("control plane " + registryUrl + " unreachable: " + e.getMessage(), e);
        }
        Map<String, Object> answer;
        try {
            answer = JsonValues.readObject(r.body());
        } catch (IOException e) {
            throw new IdentityException(r.status(), "control plane " + registryUrl + " answered " + r.status()
                    + " with a body that is not JSON: " + abbreviate(r.bodyText()));
        }
        if (r.status() != 200) {
            Object error = answer.get("error");
            throw new IdentityException(r.status(), "control plane " + registryUrl + " refused the certificate"
                    + " request (" + r.status() + " " + answer.get("code") + "): " + error);
        }
        List<X509Certificate> chain = certificates(JsonValues.string(answer, "chain"));
        List<X509Certificate> roots = certificates(JsonValues.string(answer, "trustBundle"));
        X509Certificate leaf = chain.getFirst();
        if (!Arrays.equals(leaf.getPublicKey().getEncoded(), keys.getPublic().getEncoded())) {
            throw new IdentityException(r.status(), "control plane " + registryUrl + " answered with a certificate"
                    + " for another key (serial " + leaf.getSerialNumber().toString(16) + ")");
        }
        if (trust != null) {
            // Read over a connection the pin or CA file verified: the next renewal trusts a rotation's new root too.
            trust.adopt(JsonValues.string(answer, "trustBundle"));
        }
        return new WorkloadCertificate(keys.getPrivate(), leaf, chain, roots, JsonValues.string(answer, "spiffeId"),
                Instant.now());
    }

    private PKCS10CertificationRequest csr(KeyPair keys) {
        // The CA ignores every name in a CSR; the CN only helps a person reading one.
        try {
            return new JcaPKCS10CertificationRequestBuilder(new X500Principal("CN=" + service), keys.getPublic())
                    .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate()));
        } catch (OperatorCreationException e) {
            throw new IllegalStateException("cannot sign a CSR with an EC P-256 key", e);
        }
    }

    /** The current key's signature over the new CSR: what tells the CA the renewal comes from the holder. */
    private static byte[] sign(WorkloadCertificate current, byte[] csrDer) {
        try {
            Signature signer = Signature.getInstance("SHA256withECDSA");
            signer.initSign(current.key());
            signer.update(csrDer);
            return signer.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign with the current key", e);
        }
    }

    private static String pem(Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }

    private List<X509Certificate> certificates(String pem) throws IOException {
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (var c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IOException("no certificate in the answer");
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new IOException("control plane " + registryUrl + " answered unreadable certificates: "
                    + e.getMessage(), e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    @Override
    public void close() {
        http.close();
    }
}
