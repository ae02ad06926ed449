package dev.weft.dataplane.downstream;

import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The allow-list of the WMP → provider boundary: each row of issue 16 that a WMP peer can send, and the requests Weft's
 * own consumer side sends, which must all pass. The validator is a pure function of the REQUEST frame; what a refusal
 * does to the stream and the app is {@code WmpRefusalTest}'s (exchange tests) and {@code WmpBoundarySocketTest}'s.
 */
class WmpRequestValidatorTest {

    private static WmpRequest request(String method, String authority, String path, String... fields) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < fields.length; i += 2) {
            h.add(fields[i], fields[i + 1]);
        }
        return new WmpRequest(1, true, method, authority, path, h, Unpooled.EMPTY_BUFFER);
    }

    private static Reason refusal(WmpRequest r) {
        WmpBoundary.Refusal bad = WmpRequestValidator.check(r);
        return bad == null ? null : bad.reason();
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                // CR, LF, bare LF, NUL anywhere a peer writes text (issue 16, row 1)
                Arguments.of(request("GET", "provider", "/", "x-a", "1\r\ntransfer-encoding: chunked"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", "1\nx-b: 2"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", "a\0b"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", "a\rb"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", "bell\u0007"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", "del\u007f"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", "wide \u0100"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a", " padded"), Reason.BAD_FIELD_VALUE),
                Arguments.of(request("GET", "provider", "/", "x-a\r\nx-b", "1"), Reason.BAD_FIELD_NAME),
                Arguments.of(request("GET", "provider", "/", "x-a\0", "1"), Reason.BAD_FIELD_NAME),
                Arguments.of(request("GET", "provider", "/x HTTP/1.1\r\nHost: evil\r\n\r\nGET /", "x-a", "1"), Reason.BAD_TARGET),
                Arguments.of(request("GET", "provider", "/a\nb"), Reason.BAD_TARGET),
                Arguments.of(request("GET", "provider\r\nx-injected: 1", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "provider\0", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET /x HTTP/1.1\r\n", "provider", "/"), Reason.BAD_METHOD),
                // a trailing space, or framing and Host as literal fields (row 2)
                Arguments.of(request("POST", "provider", "/", "transfer-encoding ", "chunked"), Reason.BAD_FIELD_NAME),
                Arguments.of(request("POST", "provider", "/", "transfer-encoding", "chunked"), Reason.FRAMING_FIELD),
                Arguments.of(request("GET", "provider", "/", "host", "evil.example"), Reason.FRAMING_FIELD),
                Arguments.of(request("GET", "provider", "/", "connection", "close"), Reason.FRAMING_FIELD),
                Arguments.of(request("GET", "provider", "/", "upgrade", "h2c"), Reason.FRAMING_FIELD),
                Arguments.of(request("GET", "provider", "/", "te", "trailers"), Reason.FRAMING_FIELD),
                Arguments.of(request("GET", "provider", "/", "content-length", "abc"), Reason.BAD_CONTENT_LENGTH),
                Arguments.of(request("GET", "provider", "/", "content-length", "-1"), Reason.BAD_CONTENT_LENGTH),
                Arguments.of(request("GET", "provider", "/", "content-length", "0", "content-length", "0"), Reason.BAD_CONTENT_LENGTH),
                Arguments.of(request("GET", "provider", "/", "content-length", "5"), Reason.BAD_CONTENT_LENGTH),
                Arguments.of(request("GET", "provider", "/", "Content-Type", "text/plain"), Reason.BAD_FIELD_NAME),
                // absolute form and other targets that are not origin form (row 3)
                Arguments.of(request("GET", "provider", "http://evil.example/x"), Reason.BAD_TARGET),
                Arguments.of(request("GET", "provider", "evil.example:80"), Reason.BAD_TARGET),
                Arguments.of(request("GET", "provider", ""), Reason.BAD_TARGET),
                Arguments.of(request("GET", "provider", "*"), Reason.BAD_TARGET),
                Arguments.of(request("GET", "provider", "/caf\u00e9"), Reason.BAD_TARGET),
                Arguments.of(request("PRI", "provider", "*"), Reason.BAD_TARGET),
                Arguments.of(request("CONNECT", "provider", "/"), Reason.BAD_METHOD),
                Arguments.of(request("", "provider", "/"), Reason.BAD_METHOD),
                Arguments.of(request("GET", "", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "user@provider", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "provider:", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "provider:65536", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "provider:80:80", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "[::1", "/"), Reason.BAD_AUTHORITY),
                Arguments.of(request("GET", "[fe80::1%eth0]", "/"), Reason.BAD_AUTHORITY));
    }

    @ParameterizedTest
    @MethodSource("refused")
    void aRequestOutsideTheAllowListIsRefusedWithItsReason(WmpRequest r, Reason expected) {
        assertThat(refusal(r)).isEqualTo(expected);
    }

    static Stream<WmpRequest> accepted() {
        return Stream.of(
                request("GET", "provider", "/"),
                request("GET", "provider:8080", "/users/42?expand=orders&x=%2F"),
                request("GET", "127.0.0.1:7001", "/a//b;c=d@e:f"),
                request("GET", "[::1]:8080", "/"),
                request("OPTIONS", "provider", "*"),
                request("get", "provider", "/", "x-literal-method", "yes"),
                request("PURGE", "cache.internal", "/", "x-a", "tab\tinside", "x-b", "latin-1 caf\u00e9"),
                request("GET", "provider", "/", "x-empty", ""),
                request("GET", "provider", "/", "content-length", "0"),
                request("POST", "provider", "/", "x-forwarded-for", "10.0.0.1, 127.0.0.1", "via", "1.1 weft",
                        "x-weft-deadline-ms", "1500", "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
    }

    @ParameterizedTest
    @MethodSource("accepted")
    void whatWeftsOwnConsumerSideSendsPasses(WmpRequest r) {
        assertThat(WmpRequestValidator.check(r)).isNull();
    }

    @Test
    void anAcceptedRequestsFieldsAreVettedForTheWriterAndARefusedOnesAreNot() {
        WmpHeaders good = new WmpHeaders().add("accept", "*/*").add("x-a", "caf\u00e9");
        assertThat(WmpRequestValidator.check(new WmpRequest(1, true, "GET", "provider", "/", good,
                Unpooled.EMPTY_BUFFER))).isNull();
        assertThat(good.vetted(0) && good.vetted(1)).isTrue();
        WmpHeaders bad = new WmpHeaders().add("accept", "*/*").add("x-a", "1\r\nx-b: 2");
        assertThat(WmpRequestValidator.check(new WmpRequest(1, true, "GET", "provider", "/", bad,
                Unpooled.EMPTY_BUFFER))).isNotNull();
        assertThat(bad.vetted(0) || bad.vetted(1)).isFalse();
    }

    @Test
    void contentLengthMustMatchTheBodyOfARequestInOneFrame() {
        WmpHeaders h = new WmpHeaders().add("content-length", "5");
        WmpRequest ok = new WmpRequest(1, true, "POST", "provider", "/", h,
                Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII));
        WmpRequest shortBody = new WmpRequest(1, true, "POST", "provider", "/", h,
                Unpooled.copiedBuffer("hell", StandardCharsets.US_ASCII));
        assertThat(WmpRequestValidator.check(ok)).isNull();
        assertThat(refusal(shortBody)).isEqualTo(Reason.BAD_CONTENT_LENGTH);
    }

    @Test
    void aStreamedBodyIsHeldToItsContentLengthFrameByFrame() {
        WmpRequest head = new WmpRequest(1, false, "POST", "provider", "/",
                new WmpHeaders().add("content-length", "10"), Unpooled.copiedBuffer("abcd", StandardCharsets.US_ASCII));
        WmpRequest tooMuchAtOnce = new WmpRequest(1, false, "POST", "provider", "/",
                new WmpHeaders().add("content-length", "3"), Unpooled.copiedBuffer("abcd", StandardCharsets.US_ASCII));
        assertThat(WmpRequestValidator.check(head)).isNull();
        assertThat(refusal(tooMuchAtOnce)).isEqualTo(Reason.BAD_CONTENT_LENGTH);

        long left = WmpRequestValidator.bodyLeft(head);
        assertThat(left).isEqualTo(6);
        assertThat(WmpRequestValidator.bodyOverrun(left - 6, true)).as("exactly the declared bytes").isFalse();
        assertThat(WmpRequestValidator.bodyOverrun(left - 3, false)).as("more to come").isFalse();
        assertThat(WmpRequestValidator.bodyOverrun(left - 3, true)).as("ended short").isTrue();
        assertThat(WmpRequestValidator.bodyOverrun(left - 7, false)).as("one byte past: smuggled bytes").isTrue();
        assertThat(WmpRequestValidator.bodyLeft(request("GET", "provider", "/"))).as("no content-length").isEqualTo(-1);
    }
}
