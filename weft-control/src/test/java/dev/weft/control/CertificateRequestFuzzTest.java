package dev.weft.control;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ca.CertificateAuthority;
import dev.weft.control.ca.Pem;
import dev.weft.testing.Mutator;
import io.netty.handler.codec.http.HttpMethod;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any body of {@code POST /v1/certificates} through what the control plane does with it (issue 13, fuzzing: "the CSR
 * and certificate handling"): the strict JSON ({@link ControlJson}), the choice of proof, the join token or the
 * renewal's certificate and proof, the CSR's PEM and DER ({@code ca/Csrs}: caps, one block, strict base64, one ASN.1
 * object, allow-listed keys and algorithms, its own signature) and the issuing of the leaf. Each body is answered with
 * a certificate for the key the CSR carries, naming {@code spiffe://weft.local/service/provider} and signed by the
 * root, or refused with a {@link ControlException} whose status and code docs/security.md lists, counted once in
 * {@code weft_control_certificate_refusals_total}. Anything else is a finding: another exception (the API would
 * answer 500 and count nothing), or no answer within 10 s (an Error on the CA's thread would leave the future
 * incomplete, and the request hanging).
 *
 * <p>The first byte of an input picks what the rest is, so that mutations reach the CSR parser behind a valid token or
 * a valid renewal proof, which no fuzzer guesses: 0, a request body in which {@code @TOKEN@} and {@code @CERT@} stand
 * for a valid join token and certificate of {@code provider}; 1, a CSR's DER, sent in PEM with a valid token; 2, a
 * CSR's DER, sent in PEM as a renewal whose proof the current key really signed. Seeds (made with openssl):
 * src/test/resources/dev/weft/control/CertificateRequestFuzzTestInputs. A plain build replays them and
 * {@link #seededMutationsOfTheCorpusKeepEveryRule}; to fuzz: docs/operations.md, "Fuzzing".
 */
class CertificateRequestFuzzTest {
    private static final String TARGET = "aCertificateRequestIsAnsweredOrRefusedWithItsReasonWhateverItsBody";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern REFUSAL = Pattern.compile(
            "weft_control_certificate_refusals_total\\{reason=\"([a-z-]+)\"} (\\d+)");
    private static final Map<Integer, List<String>> CODES = Map.of(400, List.of("bad-request", "bad-csr"),
            401, List.of("invalid-token", "invalid-certificate"), 403, List.of("wrong-service"));

    private static Path dir;
    private static CertificateAuthority ca;
    private static X509Certificate root;
    private static String token;
    private static String certificate;
    private static PrivateKey certificateKey;

    @BeforeAll
    static void aCaWithATokenAndACertificateOfProvider() throws Exception {
        Mutator.instrumentOnly("dev.weft.control.**:org.bouncycastle.asn1.**:org.bouncycastle.pkcs.**");
        dir = Files.createTempDirectory("weft-csr-fuzz");
        ca = CertificateAuthority.open(dir.resolve("ca"), CertificateAuthority.Settings.defaults());
        root = Pem.readCertificates(ca.trustBundlePem(), "the bundle").getFirst();
        // Any number of certificates for a day: a success spends nothing, so every input meets the same state.
        token = ca.createToken("provider", Duration.ofDays(1), false).join().token();
        KeyPairGenerator ec = KeyPairGenerator.getInstance("EC");
        ec.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair pair = ec.generateKeyPair();
        PKCS10CertificationRequest csr = new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=provider"),
                pair.getPublic()).build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate()));
        certificate = ca.issueWithToken("provider", token, Pem.write(csr)).get(10, TimeUnit.SECONDS).certificate();
        certificateKey = pair.getPrivate();
    }

    @AfterAll
    static void closeTheCa() throws Exception {
        ca.close();
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @FuzzTest(maxDuration = "4m")
    void aCertificateRequestIsAnsweredOrRefusedWithItsReasonWhateverItsBody(byte[] input) throws Exception {
        Outcome outcome = send(input);
        if (outcome.issued() != null) {
            X509Certificate leaf = Pem.readCertificates((String) outcome.issued().get("certificate"), "the answer")
                    .getFirst();
            leaf.verify(root.getPublicKey());
            assertThat(outcome.issued().get("spiffeId")).isEqualTo("spiffe://weft.local/service/provider");
            assertThat(leaf.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))).toList())
                    .containsExactly("spiffe://weft.local/service/provider");
            if (form(input) != 0) {
                // The CA signed the key the CSR carries, and no other: BouncyCastle reads it back independently.
                byte[] csrKey = new PKCS10CertificationRequest(Arrays.copyOfRange(input, 1, input.length))
                        .getSubjectPublicKeyInfo().getEncoded();
                assertThat(leaf.getPublicKey().getEncoded()).isEqualTo(csrKey);
            }
        } else {
            assertThat(CODES.getOrDefault(outcome.status(), List.of())).as(outcome.toString())
                    .contains(outcome.code());
            assertThat(outcome.counted()).as("refusals counted for " + outcome).isEqualTo(Map.of(outcome.code(), 1L));
        }
    }

    /** Each seed mutated a few hundred times with a fixed seed, so a failure reproduces. */
    @Test
    void seededMutationsOfTheCorpusKeepEveryRule() {
        byte[] special = "\"{}[],:\\-=\n+/ 0\u0000\u0030\u0082\u00ff".getBytes(StandardCharsets.ISO_8859_1);
        new Mutator(20261202, special).mutateEach(Mutator.corpus(CertificateRequestFuzzTest.class, TARGET), 150,
                input -> {
                    try {
                        aCertificateRequestIsAnsweredOrRefusedWithItsReasonWhateverItsBody(input);
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });
    }

    /** The seeds reach the issuing path in each of the three forms, and every refusal code the API has. */
    @Test
    void theSeedsReachTheIssuingPathInEachFormAndEveryRefusal() throws Exception {
        TreeSet<String> issuedIn = new TreeSet<>();
        TreeSet<String> refusedWith = new TreeSet<>();
        for (byte[] seed : Mutator.corpus(CertificateRequestFuzzTest.class, TARGET)) {
            Outcome o = send(seed);
            if (o.issued() != null) {
                issuedIn.add(List.of("body", "token", "renewal").get(form(seed)));
            } else {
                refusedWith.add(o.code());
            }
        }
        assertThat(issuedIn).containsExactly("body", "renewal", "token");
        assertThat(refusedWith).containsExactly("bad-csr", "bad-request", "invalid-certificate", "invalid-token",
                "wrong-service");
    }

    @Test
    void explicitCurveParametersHoldingAStringThatIsNotUtf8AreRefusedAsABadCsrNotA500() throws Exception {
        // Found by the second fuzzing run (the crash- file in the corpus): the refusal's message printed the
        // parameters, and BouncyCastle's toString threw IllegalArgumentException on the invalid UTF-8.
        byte[] input = Files.readAllBytes(Path.of(CertificateRequestFuzzTest.class.getResource(
                "CertificateRequestFuzzTestInputs/" + TARGET + "/crash-2b9c4e436bc07c6921e122550a0e46b3dd460d6b").toURI()));
        Outcome o = send(input);
        assertThat(o.status()).isEqualTo(400);
        assertThat(o.code()).isEqualTo("bad-csr");
        assertThat(o.message()).contains("EC key on explicit or missing curve parameters (not a named P-256 or P-384)");
        assertThat(o.counted()).isEqualTo(Map.of("bad-csr", 1L));
    }

    /**
     * What the API did with one input.
     *
     * @param issued  the answer's JSON fields (spiffeId, certificate, chain...), or null when refused
     * @param counted how much each refusal counter rose
     */
    record Outcome(Map<?, ?> issued, int status, String code, String message, Map<String, Long> counted) {}

    private static Outcome send(byte[] input) throws Exception {
        String body = body(input);
        Map<String, Long> before = refusals();
        CompletableFuture<?> answer;
        try {
            answer = IdentityApi.handle(ca, HttpMethod.POST, List.of("v1", "certificates"), body);
        } catch (ControlException e) {
            return refused(e, before);
        }
        try {
            return new Outcome((Map<?, ?>) answer.get(10, TimeUnit.SECONDS), 200, null, null, Map.of());
        } catch (TimeoutException e) {
            throw new AssertionError("no answer within 10 s: the request would hang", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ControlException refusal) {
                return refused(refusal, before);
            }
            throw new AssertionError("the API failed with " + e.getCause() + " instead of a refusal (a 500, uncounted)",
                    e.getCause());
        }
    }

    private static Outcome refused(ControlException e, Map<String, Long> before) {
        Map<String, Long> after = refusals();
        Map<String, Long> rose = new LinkedHashMap<>();
        after.forEach((code, n) -> {
            long by = n - before.getOrDefault(code, 0L);
            if (by != 0) {
                rose.put(code, by);
            }
        });
        return new Outcome(null, e.status(), e.code(), e.getMessage(), rose);
    }

    /** What the input's first byte says the rest is: 0 a body, 1 a CSR with a token, 2 a CSR for a renewal. */
    private static int form(byte[] input) {
        return input.length == 0 ? 0 : Math.floorMod(input[0], 3);
    }

    /** The request body an input stands for (see the class comment). */
    private static String body(byte[] input) throws Exception {
        if (input.length == 0) {
            return "";
        }
        byte[] rest = Arrays.copyOfRange(input, 1, input.length);
        Map<String, String> request = new LinkedHashMap<>();
        request.put("service", "provider");
        switch (form(input)) {
            case 1 -> {
                request.put("token", token);
                request.put("csr", pem(rest));
            }
            case 2 -> {
                Signature proof = Signature.getInstance("SHA256withECDSA");
                proof.initSign(certificateKey);
                proof.update(rest);
                request.put("certificate", certificate);
                request.put("proof", Base64.getEncoder().encodeToString(proof.sign()));
                request.put("csr", pem(rest));
            }
            default -> {
                String escapedCertificate = JSON.writeValueAsString(certificate);
                return new String(rest, StandardCharsets.UTF_8).replace("@TOKEN@", token)
                        .replace("@CERT@", escapedCertificate.substring(1, escapedCertificate.length() - 1));
            }
        }
        return JSON.writeValueAsString(request);
    }

    private static String pem(byte[] der) {
        return "-----BEGIN CERTIFICATE REQUEST-----\n" + Base64.getMimeEncoder(64, new byte[]{'\n'})
                .encodeToString(der) + "\n-----END CERTIFICATE REQUEST-----\n";
    }

    /** Every refusal counter of the CA, from its /metrics text. */
    private static Map<String, Long> refusals() {
        Map<String, Long> out = new LinkedHashMap<>();
        Matcher m = REFUSAL.matcher(ca.metricsText());
        while (m.find()) {
            out.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return out;
    }
}
