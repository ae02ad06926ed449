package dev.weft.dataplane.downstream;

import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The allow-list of the WMP answer → consumer side boundary: what a peer's answer may carry before it becomes the
 * client's HTTP/1.1, and the answers Weft's own provider side sends, which must all pass. The validator is a pure
 * function of the RESPONSE frame (and of whether the request was a HEAD); what a refusal does to the stream and the
 * client is {@code WmpUpstreamAnswerTest}'s (the stream, on an EmbeddedChannel) and {@code WmpAnswerSocketTest}'s.
 */
class WmpAnswerValidatorTest {

    private static WmpResponse answer(int status, String body, String... fields) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < fields.length; i += 2) {
            h.add(fields[i], fields[i + 1]);
        }
        return new WmpResponse(1, true, status, h, Unpooled.copiedBuffer(body, StandardCharsets.US_ASCII));
    }

    private static Reason refusal(WmpResponse r, boolean toHead) {
        WmpBoundary.Refusal bad = WmpAnswerValidator.check(r, toHead);
        return bad == null ? null : bad.reason();
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                // statuses a RESPONSE cannot be: interim ones stay on the app's hop, 101 would switch the client's
                // connection to another protocol, and 600..999 pass WMP's decoder but are no HTTP status
                Arguments.of(answer(101, "", "upgrade", "h2c"), Reason.ANSWER_BAD_STATUS),
                Arguments.of(answer(100, ""), Reason.ANSWER_BAD_STATUS),
                Arguments.of(answer(103, "", "link", "</a.css>; rel=preload"), Reason.ANSWER_BAD_STATUS),
                Arguments.of(answer(600, ""), Reason.ANSWER_BAD_STATUS),
                Arguments.of(answer(999, ""), Reason.ANSWER_BAD_STATUS),
                // CR, LF, NUL and other control bytes: header lines written into the client's answer
                Arguments.of(answer(200, "", "x-a", "1\r\nset-cookie: session=evil"), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a", "1\nx-b: 2"), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a", "a\rb"), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a", "a\0b"), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a", "del\u007f"), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a", "wide \u0100"), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a", "padded "), Reason.ANSWER_BAD_FIELD_VALUE),
                Arguments.of(answer(200, "", "x-a\r\nx-b", "1"), Reason.ANSWER_BAD_FIELD_NAME),
                Arguments.of(answer(200, "", "transfer-encoding ", "chunked"), Reason.ANSWER_BAD_FIELD_NAME),
                Arguments.of(answer(200, "", "X-Upper", "1"), Reason.ANSWER_BAD_FIELD_NAME),
                Arguments.of(answer(200, "", "", "1"), Reason.ANSWER_BAD_FIELD_NAME),
                // framing is WMP's own: a literal framing or hop-by-hop field would be the client's framing
                Arguments.of(answer(200, "", "transfer-encoding", "chunked"), Reason.ANSWER_FRAMING_FIELD),
                Arguments.of(answer(200, "", "connection", "close"), Reason.ANSWER_FRAMING_FIELD),
                Arguments.of(answer(200, "", "keep-alive", "timeout=5"), Reason.ANSWER_FRAMING_FIELD),
                Arguments.of(answer(200, "", "upgrade", "websocket"), Reason.ANSWER_FRAMING_FIELD),
                Arguments.of(answer(200, "", "trailer", "x-checksum"), Reason.ANSWER_FRAMING_FIELD),
                // content-length: one number, which the body matches
                Arguments.of(answer(200, "hello", "content-length", "abc"), Reason.ANSWER_BAD_CONTENT_LENGTH),
                Arguments.of(answer(200, "hello", "content-length", "+5"), Reason.ANSWER_BAD_CONTENT_LENGTH),
                Arguments.of(answer(200, "hello", "content-length", "5, 5"), Reason.ANSWER_BAD_CONTENT_LENGTH),
                Arguments.of(answer(200, "hello", "content-length", "5", "content-length", "5"),
                        Reason.ANSWER_BAD_CONTENT_LENGTH),
                Arguments.of(answer(200, "hello", "content-length", "4"), Reason.ANSWER_BAD_CONTENT_LENGTH),
                Arguments.of(answer(200, "hello", "content-length", "6"), Reason.ANSWER_BAD_CONTENT_LENGTH),
                Arguments.of(answer(204, "", "content-length", "abc"), Reason.ANSWER_BAD_CONTENT_LENGTH));
    }

    @ParameterizedTest
    @MethodSource("refused")
    void anAnswerOutsideTheAllowListIsRefusedWithItsReason(WmpResponse r, Reason expected) {
        try {
            assertThat(refusal(r, false)).isEqualTo(expected);
        } finally {
            r.release();
        }
    }

    @Test
    void anAnswerWithoutABodyInHttp11MayDeclareALengthAndItsBytesAreLeftToTheCallerToDrop() {
        WmpResponse declared = answer(200, "", "content-length", "1234", "content-type", "text/plain");
        WmpResponse errorToHead = answer(503, "weft: inbound concurrency limit 8 reached\n", "x-weft-error",
                "inbound-limit");
        WmpResponse noContent = answer(204, "stray", "content-length", "0");
        assertThat(WmpAnswerValidator.check(declared, true)).as("the length of the body a GET would get").isNull();
        assertThat(WmpAnswerValidator.check(errorToHead, true)).as("a provider's own error answer to a HEAD").isNull();
        assertThat(WmpAnswerValidator.check(noContent, false)).isNull();
        assertThat(WmpAnswerValidator.bodiless(200, true)).isTrue();
        assertThat(WmpAnswerValidator.bodiless(204, false)).isTrue();
        assertThat(WmpAnswerValidator.bodiless(304, false)).isTrue();
        assertThat(WmpAnswerValidator.bodiless(200, false)).isFalse();
        assertThat(WmpAnswerValidator.bodyLeft(declared, true)).as("no length to hold a dropped body to").isEqualTo(-1);
        declared.release();
        errorToHead.release();
        noContent.release();
    }

    static Stream<Arguments> accepted() {
        return Stream.of(
                Arguments.of(answer(200, "hello", "content-type", "text/plain", "content-length", "5",
                        "via", "1.1 weft")),
                Arguments.of(answer(200, "hello")),
                Arguments.of(answer(200, "", "content-length", "0")),
                Arguments.of(answer(204, "", "content-length", "0")),
                Arguments.of(answer(304, "", "etag", "\"v1\"", "content-length", "1234")),
                Arguments.of(answer(404, "", "x-empty", "")),
                Arguments.of(answer(599, "")),
                Arguments.of(answer(200, "", "set-cookie", "a=1", "set-cookie", "b=2", "x-b", "latin-1 caf\u00e9",
                        "x-c", "tab\tinside", "host", "app")),
                // the provider side's own error answer (WmpDownstream.answerError)
                Arguments.of(answer(503, "weft: inbound concurrency limit 8 reached\n", "content-type", "text/plain",
                        "x-weft-error", "inbound-limit", "retry-after", "1", "x-weft-unprocessed", "true")),
                // fields addressed to a proxy are dropped by the forwarding rules, not refused here
                Arguments.of(answer(407, "", "proxy-authenticate", "Basic realm=\"mesh\"")));
    }

    @ParameterizedTest
    @MethodSource("accepted")
    void whatWeftsOwnProviderSideSendsPasses(WmpResponse r) {
        try {
            assertThat(WmpAnswerValidator.check(r, false)).isNull();
        } finally {
            r.release();
        }
    }

    @Test
    void aStreamedBodyIsHeldToItsContentLengthFrameByFrame() {
        WmpResponse head = new WmpResponse(1, false, 200, new WmpHeaders().add("content-length", "10"),
                Unpooled.copiedBuffer("abcd", StandardCharsets.US_ASCII));
        WmpResponse tooMuchAtOnce = new WmpResponse(1, false, 200, new WmpHeaders().add("content-length", "3"),
                Unpooled.copiedBuffer("abcd", StandardCharsets.US_ASCII));
        assertThat(WmpAnswerValidator.check(head, false)).isNull();
        assertThat(refusal(tooMuchAtOnce, false)).isEqualTo(Reason.ANSWER_BAD_CONTENT_LENGTH);

        long left = WmpAnswerValidator.bodyLeft(head, false);
        assertThat(left).isEqualTo(6);
        assertThat(WmpAnswerValidator.checkData(left - 6, true)).as("exactly the declared bytes").isNull();
        assertThat(WmpAnswerValidator.checkData(left - 3, false)).as("more to come").isNull();
        assertThat(WmpAnswerValidator.checkData(left - 3, true).reason()).as("ended short")
                .isEqualTo(Reason.ANSWER_BAD_CONTENT_LENGTH);
        assertThat(WmpAnswerValidator.checkData(left - 7, false).reason()).as("one byte past")
                .isEqualTo(Reason.ANSWER_BAD_CONTENT_LENGTH);
        WmpResponse unframed = answer(200, "x");
        assertThat(WmpAnswerValidator.bodyLeft(unframed, false)).as("no content-length: any length").isEqualTo(-1);
        head.release();
        tooMuchAtOnce.release();
        unframed.release();
    }

    @Test
    void aRefusalBecomesA502UpstreamProtocolErrorThatNamesThePeerAndWhatWasWrong() {
        WmpResponse r = answer(200, "", "transfer-encoding", "chunked");
        var error = WmpAnswerValidator.error(WmpAnswerValidator.check(r, false), "10.0.0.5:7001");
        r.release();
        assertThat(error.status()).isEqualTo(502);
        assertThat(error.kind()).isEqualTo("upstream-protocol-error");
        assertThat(error.unprocessed()).as("the peer's app may have acted on the request").isFalse();
        assertThat(error.getMessage()).contains("10.0.0.5:7001").contains("transfer-encoding");
    }
}
