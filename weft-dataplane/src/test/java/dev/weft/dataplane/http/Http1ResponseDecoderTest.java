package dev.weft.dataplane.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;

import static dev.weft.dataplane.http.Http1RequestDecoderTest.bytes;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.drain;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.fields;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.release;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.transcript;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Http1ResponseDecoder}: the answers of an app or a peer on a pooled connection, and the 502 for any that
 * breaks a rule. Every buffer read out is released (the leak check fails the class otherwise).
 */
class Http1ResponseDecoderTest {
    static final String OK = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";

    static Stream<Arguments> violations() {
        String s = "HTTP/1.1 200 OK\r\n";
        return Stream.of(
                Arguments.of("Content-Length abc", s + "Content-Length: abc\r\n\r\n"),
                Arguments.of("two Content-Length values", s + "Content-Length: 1, 1\r\n\r\nx"),
                Arguments.of("two Content-Length fields", s + "Content-Length: 1\r\nContent-Length: 1\r\n\r\nx"),
                Arguments.of("Content-Length with Transfer-Encoding",
                        s + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
                Arguments.of("Transfer-Encoding gzip", s + "Transfer-Encoding: gzip\r\n\r\n"),
                Arguments.of("Transfer-Encoding in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                Arguments.of("a bare CR in a value", s + "X-A: a\rb\r\nContent-Length: 0\r\n\r\n"),
                Arguments.of("a bare LF", s + "X-A: a\nContent-Length: 0\r\n\r\n"),
                Arguments.of("a bare LF after the status line", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n"),
                Arguments.of("NUL in a value", s + "X-A: a\u0000b\r\nContent-Length: 0\r\n\r\n"),
                Arguments.of("a control byte in a value", s + "X-A: a\u0007b\r\nContent-Length: 0\r\n\r\n"),
                Arguments.of("whitespace before a colon", s + "Content-Length : 0\r\n\r\n"),
                Arguments.of("obs-fold", s + "X-A: a\r\n\tb\r\nContent-Length: 0\r\n\r\n"),
                Arguments.of("an invalid chunk size", s + "Transfer-Encoding: chunked\r\n\r\nxyz\r\n"),
                Arguments.of("a chunk without CRLF after it", s + "Transfer-Encoding: chunked\r\n\r\n1\r\nab\r\n"),
                Arguments.of("a head over the byte limit",
                        s + "X-Big: " + "a".repeat(HttpLimits.MAX_HEADER_BYTES) + "\r\n\r\n"),
                Arguments.of("129 fields", s + fields(129) + "\r\n"),
                Arguments.of("101 Switching Protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"),
                Arguments.of("a two-digit status", "HTTP/1.1 20 OK\r\n\r\n"),
                Arguments.of("no SP before the reason", "HTTP/1.1 200OK\r\n\r\n"),
                Arguments.of("status 600", "HTTP/1.1 600 Beyond\r\n\r\n"),
                Arguments.of("status 099", "HTTP/1.1 099 Early\r\n\r\n"),
                Arguments.of("HTTP/2", "HTTP/2 200\r\n\r\n"),
                Arguments.of("HTTP/1.2", "HTTP/1.2 200 OK\r\n\r\n"),
                Arguments.of("a lower-case version", "http/1.1 200 OK\r\n\r\n"),
                Arguments.of("a control byte in the reason", "HTTP/1.1 200 O\u0001K\r\n\r\n"),
                Arguments.of("a status line over the limit",
                        "HTTP/1.1 200 " + "O".repeat(HttpLimits.MAX_INITIAL_LINE) + "\r\n\r\n"),
                Arguments.of("not HTTP at all", "SSH-2.0-OpenSSH_9.6\r\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("violations")
    void anAnswerBreakingARuleIsRejected502AndNothingAfterIt(String what, String input) {
        EmbeddedChannel ch = channel();
        ch.writeInbound(bytes(input));
        List<Object> out = drain(ch);
        assertThat(out).isNotEmpty();
        assertThat(out.getLast()).isInstanceOfSatisfying(Http1Messages.Rejected.class, r -> {
            assertThat(r.status()).isEqualTo(502);
            assertThat(r.kind()).isEqualTo("app-protocol-error");
            assertThat(r.message()).contains("expected");
        });
        assertThat(out.subList(0, out.size() - 1)).noneMatch(m -> m instanceof Http1Messages.Rejected);
        ((Http1ResponseDecoder) ch.pipeline().first()).expectHeadAnswer(false);
        ch.writeInbound(bytes(OK));
        assertThat(ch.finish()).isFalse();
        release(out);
    }

    @Test
    void anAnswerIsDecodedToItsHeadBodyAndEnd() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(bytes(OK));
        assertThat(transcript(ch)).containsExactly("200 {content-type: text/plain, content-length: 5}", "body hello",
                "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void anAnswerToHeadHasNoBodyWhateverItsHeadSays() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1ResponseDecoder());
        Http1ResponseDecoder d = (Http1ResponseDecoder) ch.pipeline().first();
        d.expectHeadAnswer(true);
        d.expectHeadAnswer(false);
        assertThat(d.outstanding()).isEqualTo(2);
        ch.writeInbound(bytes("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"));
        assertThat(transcript(ch)).containsExactly("200 {content-length: 1000}", "END",
                "200 {transfer-encoding: chunked}", "body hi", "END");
        assertThat(d.outstanding()).isZero();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void answers204And304HaveNoBody() {
        EmbeddedChannel ch = channel(false, false);
        ch.writeInbound(bytes("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"a\"\r\n"
                + "Content-Length: 12\r\n\r\n"));
        assertThat(transcript(ch)).containsExactly("204 {}", "END", "304 {etag: \"a\", content-length: 12}", "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void anAnswerWithoutFramingRunsUntilTheConnectionCloses() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(bytes("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome "));
        ch.writeInbound(bytes("bytes\r\n\r\nHTTP/1.1 200 OK\r\n")); // all body: nothing frames it
        assertThat(transcript(ch)).containsExactly("200 close {content-type: text/plain}",
                "body some bytes\r\n\r\nHTTP/1.1 200 OK\r\n");
        ch.finish();
        assertThat(transcript(ch)).containsExactly("END");
    }

    @Test
    void interimAnswersAreSkippedAndTheFinalOneIsPassedOn() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n"
                + "\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"));
        assertThat(transcript(ch)).containsExactly("200 {content-length: 2}", "body hi", "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aStatusLineMayLackItsReason() {
        EmbeddedChannel ch = channel(false, false, false);
        ch.writeInbound(bytes("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\nHTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n"
                + "HTTP/1.1 599 Any\treason \u00e9\r\nContent-Length: 0\r\n\r\n"));
        assertThat(transcript(ch)).containsExactly("200 {content-length: 0}", "END", "404 {content-length: 0}", "END",
                "599 {content-length: 0}", "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void keepAliveFollowsTheVersionAndConnection() {
        EmbeddedChannel ch = channel(false, false, false, false);
        ch.writeInbound(bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"
                + "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"
                + "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
        assertThat(transcript(ch)).containsExactly("200 {content-length: 0}", "END",
                "200 close {connection: Close, content-length: 0}", "END", "200 close {content-length: 0}", "END",
                "200 {connection: keep-alive, content-length: 0}", "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void bytesWhileNoRequestIsOutstandingAreRefused() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1ResponseDecoder());
        ch.writeInbound(bytes("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n"));
        assertThat(transcript(ch)).singleElement().asString()
                .startsWith("rejected 502 app-protocol-error: an answer 'HTTP/1.1 408 Request Timeout' arrived while"
                        + " no request was outstanding");

        // A second answer to one request (a server answering twice) is not taken for the next request's.
        EmbeddedChannel twice = channel();
        twice.writeInbound(bytes(OK + OK));
        assertThat(transcript(twice)).containsExactly("200 {content-type: text/plain, content-length: 5}",
                "body hello", "END", "rejected 502 app-protocol-error: an answer 'HTTP/1.1 200 OK' arrived while no"
                        + " request was outstanding (expected nothing until a request is sent)");
        assertThat(twice.finish()).isFalse();
    }

    @Test
    void tooManyOutstandingRequestsAreABugOfThePool() {
        Http1ResponseDecoder d = new Http1ResponseDecoder();
        for (int i = 0; i < Http1ResponseDecoder.MAX_OUTSTANDING; i++) {
            d.expectHeadAnswer(i % 2 == 0);
        }
        assertThatThrownBy(() -> d.expectHeadAnswer(false)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("expected at most 64");
    }

    @Test
    void aConnectionClosedInTheMiddleOfAnAnswerIsRejected() {
        for (String cut : List.of("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "HTTP/1.1 200 OK\r\nConte",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")) {
            EmbeddedChannel ch = channel();
            ch.writeInbound(bytes(cut));
            ch.finish();
            assertThat(transcript(ch)).as(cut).last().asString()
                    .startsWith("rejected 502 app-protocol-error: the connection closed");
        }
        // With no byte of an answer, nothing is emitted: the pool sees the channel close.
        EmbeddedChannel ch = channel();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void answersSplitAtEveryByteGiveTheSameResult() {
        String input = "HTTP/1.1 100 Continue\r\n\r\n" + OK
                + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n";
        EmbeddedChannel whole = channel(false, false);
        whole.writeInbound(bytes(input));
        List<String> expected = transcript(whole);
        assertThat(whole.finish()).isFalse();
        byte[] b = input.getBytes(StandardCharsets.ISO_8859_1);
        for (int at = 1; at < b.length; at++) {
            EmbeddedChannel ch = channel(false, false);
            ch.writeInbound(bytes(b, 0, at));
            ch.writeInbound(bytes(b, at, b.length - at));
            assertThat(transcript(ch)).as("split at %d", at).isEqualTo(expected);
            assertThat(ch.finish()).isFalse();
        }
    }

    @Test
    void bodyPiecesShareMemoryWithTheReadBuffer() {
        EmbeddedChannel ch = channel();
        ByteBuf in = bytes(OK);
        ch.writeInbound(in);
        List<Object> out = drain(ch);
        in.setByte(OK.length() - 5, 'J');
        assertThat(((ByteBuf) out.get(1)).toString(StandardCharsets.US_ASCII)).isEqualTo("Jello");
        release(out);
        assertThat(ch.finish()).isFalse();
    }

    /** A decoder told of one request per flag (true: HEAD), in an EmbeddedChannel. */
    static EmbeddedChannel channel(boolean... heads) {
        Http1ResponseDecoder d = new Http1ResponseDecoder();
        if (heads.length == 0) {
            d.expectHeadAnswer(false);
        }
        for (boolean h : heads) {
            d.expectHeadAnswer(h);
        }
        return new EmbeddedChannel(d);
    }
}
