package dev.weft.dataplane.security;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.weft.dataplane.fuzz.Mutator;
import dev.weft.registry.ServiceNames;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any certificate a peer can send, through the verifier both sides of a mesh connection run: it is accepted, or refused
 * with a {@link TlsRefusal} reason counted exactly once; nothing else escapes (an exception of another type would
 * fail the handshake uncounted). Whatever it accepts names one valid service of our trust domain.
 *
 * <p>The seeds (src/test/resources/.../PeerVerifierFuzzTestInputs) are DER certificates made with openssl under
 * {@code fuzz-root.pem}, valid for 100 years, so mutations start from the accepted path as well as from each
 * refusal. A plain build replays them and {@link #seededMutationsOfTheCorpusKeepEveryRule}; to fuzz, as the other
 * targets (docs/operations.md, "Fuzzing").
 */
class PeerVerifierFuzzTest {
    private static final String TARGET = "aPeerCertificateIsAcceptedOrRefusedWithItsReasonWhateverItsBytes";
    private static X509Certificate root;

    @BeforeAll
    static void loadTheRootAndInstrumentOnlySecurity() throws Exception {
        Mutator.instrumentOnly("dev.weft.dataplane.security.**");
        try (InputStream in = PeerVerifierFuzzTest.class.getResourceAsStream("fuzz-root.pem")) {
            root = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    @FuzzTest(maxDuration = "4m")
    void aPeerCertificateIsAcceptedOrRefusedWithItsReasonWhateverItsBytes(byte[] input) {
        X509Certificate[] chain = parse(input);
        if (chain == null) {
            return; // not certificates: BoringSSL and Netty refuse those before any verifier sees them
        }
        List<TlsRefusal> counted = new ArrayList<>();
        WorkloadCertificate ours = new WorkloadCertificate(null, root, List.of(root), List.of(root),
                "spiffe://weft.local/service/self", Instant.now());
        PeerVerifier v = new PeerVerifier(() -> ours, (server, reason, detail) -> counted.add(reason));
        boolean accepted;
        try {
            v.checkClientTrusted(chain, "EC");
            accepted = true;
        } catch (TlsRefusal.PeerRejected e) {
            accepted = false;
            assertThat(counted).containsExactly(e.reason);
        } catch (Exception e) {
            throw new AssertionError("the verifier threw " + e + " instead of a counted refusal", e);
        }
        PeerIdentity id = null;
        try {
            id = PeerVerifier.identityOf(chain[0], "weft.local");
        } catch (TlsRefusal.PeerRejected e) {
            assertThat(accepted).as("an accepted certificate has a usable SPIFFE ID").isFalse();
        }
        if (accepted) {
            assertThat(counted).isEmpty();
        }
        if (id != null) {
            assertThat(ServiceNames.isValid(id.service())).as(id.toString()).isTrue();
            assertThat(id.spiffeId()).isEqualTo("spiffe://weft.local/service/" + id.service());
        }
    }

    /** Each seed mutated a few hundred times with a fixed seed, so a failure reproduces. */
    @Test
    void seededMutationsOfTheCorpusKeepEveryRule() {
        List<byte[]> seeds = Mutator.corpus(PeerVerifierFuzzTest.class, TARGET);
        assertThat(seeds).hasSizeGreaterThanOrEqualTo(7);
        new Mutator(20261202, new byte[] {0x30, 0x04, 0x06, (byte) 0x86, (byte) 0x82, (byte) 0xa0, 0x00, (byte) 0xff})
                .mutateEach(seeds, 300, this::aPeerCertificateIsAcceptedOrRefusedWithItsReasonWhateverItsBytes);
    }

    /** The seeds cover both paths: the valid one is accepted, each other one refused for its own reason. */
    @Test
    void theSeedsReachTheAcceptedPathAndEachRefusal() {
        List<byte[]> seeds = Mutator.corpus(PeerVerifierFuzzTest.class, TARGET);
        List<String> outcomes = new ArrayList<>();
        WorkloadCertificate ours = new WorkloadCertificate(null, root, List.of(root), List.of(root),
                "spiffe://weft.local/service/self", Instant.now());
        PeerVerifier v = new PeerVerifier(() -> ours, (server, reason, detail) -> { });
        for (byte[] seed : seeds) {
            try {
                v.checkClientTrusted(parse(seed), "EC");
                outcomes.add("accepted");
            } catch (TlsRefusal.PeerRejected e) {
                outcomes.add(e.reason.label());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        // In file name order: bad-service, dns-and-uri, leaf-then-root, no-san, other-domain, two-uris, valid-provider.
        assertThat(outcomes).containsExactly("spiffe_id", "accepted", "accepted", "spiffe_id", "trust_domain",
                "spiffe_id", "accepted");
    }

    private static X509Certificate[] parse(byte[] input) {
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(input))) {
                out.add((X509Certificate) c);
            }
            return out.isEmpty() ? null : out.toArray(X509Certificate[]::new);
        } catch (Exception e) {
            return null;
        }
    }
}
