package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProxyHeadersTest {

    private static WmpHeaders fields(String... pairs) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    @Test
    void aRequestLosesItsHopByHopFieldsAndGainsOneXForwardedForAndOneViaInItsOwnList() {
        WmpHeaders f = fields("connection", "close, x-secret", "x-secret", "1", "x-forwarded-for", "10.0.0.1",
                "accept", "*/*", "te", "trailers", "via", "1.0 edge", "content-length", "5");
        RequestHead head = new RequestHead("POST", "provider", "/", f);
        assertThat(ProxyHeaders.forwardRequest(head, "127.0.0.1")).isSameAs(f);
        assertThat(f).isEqualTo(fields("accept", "*/*", "content-length", "5",
                "x-forwarded-for", "10.0.0.1, 127.0.0.1", "via", "1.0 edge, " + ProxyHeaders.VIA_VALUE));
    }

    @Test
    void aRetriedRequestIsNotForwardedTwice() {
        RequestHead head = new RequestHead("GET", "provider", "/", fields("accept", "*/*"));
        ProxyHeaders.forwardRequest(head, "127.0.0.1");
        ProxyHeaders.forwardRequest(head, "127.0.0.1");
        assertThat(head.fields()).isEqualTo(fields("accept", "*/*", "x-forwarded-for", "127.0.0.1",
                "via", ProxyHeaders.VIA_VALUE));
    }

    @Test
    void theMeshsSecondHopAddsItselfToViaAndLeavesXForwardedForAsItCame() {
        RequestHead head = new RequestHead("GET", "provider", "/", fields("x-forwarded-for", "127.0.0.1",
                "via", ProxyHeaders.VIA_VALUE));
        ProxyHeaders.forwardRequest(head, null);
        assertThat(head.fields()).isEqualTo(fields("x-forwarded-for", "127.0.0.1",
                "via", ProxyHeaders.VIA_VALUE + ", " + ProxyHeaders.VIA_VALUE));
    }

    @Test
    void anAnswerLosesItsHopByHopFieldsAndKeepsAHostField() {
        ResponseHead head = new ResponseHead(200, fields("keep-alive", "timeout=5", "host", "app",
                "transfer-encoding", "chunked", "content-type", "text/plain"));
        ProxyHeaders.forwardAnswer(head);
        assertThat(head.fields()).isEqualTo(fields("host", "app", "content-type", "text/plain",
                "via", ProxyHeaders.VIA_VALUE));
    }
}
