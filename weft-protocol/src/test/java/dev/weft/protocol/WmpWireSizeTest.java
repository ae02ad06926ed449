package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static dev.weft.protocol.WmpTestSupport.bytes;
import static dev.weft.protocol.WmpTestSupport.encode;
import static org.assertj.core.api.Assertions.assertThat;

/** The reason WMP exists between sidecars: the same exchange in fewer bytes than HTTP/1.1. A size check, not a timing one. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WmpWireSizeTest {
    private static final String REQUEST_BODY = "name=weft&mesh=yes!!";
    private static final String RESPONSE_BODY = "hello mesh";

    @Test
    void a_typical_mesh_exchange_takes_at_least_40_percent_fewer_bytes_than_http_1_1() {
        assertThat(REQUEST_BODY).hasSize(20);
        assertThat(RESPONSE_BODY).hasSize(10);

        String httpRequest = "POST / HTTP/1.1\r\n"
                + "Host: provider\r\n"
                + "Content-Length: " + REQUEST_BODY.length() + "\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\n"
                + "X-Forwarded-For: 127.0.0.1\r\n"
                + "Via: 1.1 weft\r\n"
                + "\r\n"
                + REQUEST_BODY;
        String httpResponse = "HTTP/1.1 200 OK\r\n"
                + "Content-Length: " + RESPONSE_BODY.length() + "\r\n"
                + "Content-Type: text/plain\r\n"
                + "\r\n"
                + RESPONSE_BODY;
        int httpBytes = httpRequest.getBytes(StandardCharsets.US_ASCII).length
                + httpResponse.getBytes(StandardCharsets.US_ASCII).length;

        WmpRequest request = new WmpRequest(1, true, "POST", "provider", "/",
                new WmpHeaders().add("content-type", "application/x-www-form-urlencoded")
                        .add("x-forwarded-for", "127.0.0.1")
                        .add("via", "1.1 weft"),
                bytes(REQUEST_BODY));
        WmpResponse response = new WmpResponse(1, true, 200,
                new WmpHeaders().add("content-type", "text/plain"), bytes(RESPONSE_BODY));
        ByteBuf requestWire = encode(request);
        ByteBuf responseWire = encode(response);
        int wmpBytes = requestWire.readableBytes() + responseWire.readableBytes();
        requestWire.release();
        responseWire.release();

        // Pinned so a change to the table or layout that costs bytes is noticed (docs/protocol.md quotes them).
        assertThat(httpBytes).isEqualTo(167 + 75);
        assertThat(wmpBytes).isEqualTo(69 + 27);
        assertThat((double) wmpBytes).as("WMP %d bytes vs HTTP/1.1 %d bytes", wmpBytes, httpBytes)
                .isLessThanOrEqualTo(httpBytes * 0.60);
    }
}
