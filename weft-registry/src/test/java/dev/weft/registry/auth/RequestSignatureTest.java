package dev.weft.registry.auth;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The signed-request header read as hostile input, and what its signature covers: the method, the target, the
 * timestamp, the nonce and the body (the control plane's checks of the certificate are in ApiCredentialsTest).
 */
class RequestSignatureTest {
    private static final String NONCE = "AAAAAAAAAAAAAAAAAAAAAA";

    private static KeyPair ec() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static String header(KeyPair keys, String method, String target, long created, byte[] body)
            throws Exception {
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(keys.getPrivate());
        s.update(RequestSignature.signatureBase(method, target, created, NONCE, body));
        Base64.Encoder b64 = Base64.getEncoder();
        return "Weft-Signature cert=" + b64.encodeToString(new byte[]{1, 2, 3}) + ",created=" + created
                + ",nonce=" + NONCE + ",sig=" + b64.encodeToString(s.sign());
    }

    @Test
    void theSignatureCoversMethodTargetAndBody() throws Exception {
        KeyPair keys = ec();
        byte[] body = "{\"host\":\"127.0.0.1\"}".getBytes(StandardCharsets.UTF_8);
        String path = "/v1/services/provider/endpoints/p1";
        RequestSignature.Parsed p = RequestSignature.parse(header(keys, "PUT", path, 1_700_000_000L, body));
        assertThat(p.created()).isEqualTo(1_700_000_000L);
        assertThat(p.nonce()).isEqualTo(NONCE);
        assertThat(p.certificateDer()).containsExactly(1, 2, 3);

        assertThat(RequestSignature.verify(keys.getPublic(), p, "PUT", path, body)).isTrue();
        assertThat(RequestSignature.verify(keys.getPublic(), p, "DELETE", path, body)).isFalse();
        assertThat(RequestSignature.verify(keys.getPublic(), p, "PUT", path + "x", body)).isFalse();
        assertThat(RequestSignature.verify(keys.getPublic(), p, "PUT", path,
                "{\"host\":\"10.0.0.1\"}".getBytes(StandardCharsets.UTF_8))).isFalse();
        assertThat(RequestSignature.verify(ec().getPublic(), p, "PUT", path, body)).as("another key").isFalse();
        // No body and an empty body are the same request.
        RequestSignature.Parsed empty = RequestSignature.parse(header(keys, "GET", "/v1/services", 1L, null));
        assertThat(RequestSignature.verify(keys.getPublic(), empty, "GET", "/v1/services", new byte[0])).isTrue();
    }

    @Test
    void aMalformedHeaderIsRefusedSayingWhat() {
        String ok = "cert=AQID,created=1,nonce=" + NONCE + ",sig=AQID";
        assertThatThrownBy(() -> RequestSignature.parse("Bearer x")).hasMessageContaining("not a Weft-Signature");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature cert=AQID,created=1,nonce=" + NONCE))
                .hasMessageContaining("missing sig");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature " + ok + ",sig=AQID"))
                .hasMessageContaining("given twice");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature " + ok + ",alg=none"))
                .hasMessageContaining("unknown Weft-Signature parameter 'alg'");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature " + ok.replace(NONCE, "short")))
                .hasMessageContaining("malformed nonce");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature " + ok.replace("created=1", "created=-1")))
                .hasMessageContaining("malformed created");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature " + ok.replace("sig=AQID", "sig=*")))
                .hasMessageContaining("malformed base64");
        assertThatThrownBy(() -> RequestSignature.parse("Weft-Signature " + ok + ",cert=" + "A".repeat(9000)))
                .hasMessageContaining("longer than");
        assertThat(RequestSignature.parse("weft-signature " + ok).nonce()).as("the scheme ignores case")
                .isEqualTo(NONCE);
    }
}
