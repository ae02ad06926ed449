package dev.weft.dataplane.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Http1RequestDecoder}: what a client may send a listener, and the one Rejected for what it may not. Every
 * buffer read out of a channel is released here; the leak check (weft-testing, on for every test class) fails the
 * class on any that is not.
 */
class Http1RequestDecoderTest {
    static final String GET = "GET /orders/7?x=1 HTTP/1.1\r\nHost: provider:8080\r\nAccept: */*\r\n"
            + "User-Agent: curl/8.5\r\n\r\n";
    static final String POST = "POST /orders HTTP/1.1\r\nHost: provider\r\nContent-Type: application/json\r\n"
            + "Content-Length: 11\r\n\r\n{\"id\": 7}\r\n";
    static final String CHUNKED = "PUT /files/a HTTP/1.1\r\nHost: provider\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n7;name=\"v a\"\r\n, world\r\n0\r\nChecksum: abc\r\n\r\n";

    // ---- the rule table

    static Arguments row(String what, String input, int status, String kind) {
        return Arguments.of(what, input, status, kind);
    }

    static Stream<Arguments> rejections() {
        String host = "Host: x\r\n";
        return Stream.of(
                // request line
                row("two spaces after the method", "GET  / HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("two spaces before the version", "GET /  HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("a space after the version", "GET / HTTP/1.1 \r\n" + host + "\r\n", 400, "bad-request"),
                row("a tab instead of a space", "GET\t/ HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("no version (HTTP/0.9)", "GET /\r\n\r\n", 400, "bad-request"),
                row("a method that is not a token", "GE(T / HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("a line starting with a space", " GET / HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("a lower-case version", "GET / http/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("a version of two minor digits", "GET / HTTP/1.10\r\n" + host + "\r\n", 400, "bad-request"),
                row("HTTP/1.2", "GET / HTTP/1.2\r\n" + host + "\r\n", 505, "http-version-not-supported"),
                row("HTTP/2.0", "GET / HTTP/2.0\r\n" + host + "\r\n", 505, "http-version-not-supported"),
                row("HTTP/0.9 with a version", "GET / HTTP/0.9\r\n" + host + "\r\n", 505,
                        "http-version-not-supported"),
                row("the HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "bad-request"),
                row("a request line over the limit",
                        "GET /" + "a".repeat(HttpLimits.MAX_INITIAL_LINE) + " HTTP/1.1\r\n" + host + "\r\n", 414,
                        "uri-too-long"),
                // target
                row("a raw non-ASCII byte in the target", "GET /caf\u00e9 HTTP/1.1\r\n" + host + "\r\n", 400,
                        "bad-request"),
                row("a control byte in the target", "GET /a\u0001b HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("DEL in the target", "GET /a\u007fb HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("* with GET", "GET * HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("an absolute target naming another host", "GET http://other/a HTTP/1.1\r\n" + host + "\r\n",
                        400, "bad-request"),
                row("an absolute target without Host (HTTP/1.0)", "GET http://x/a HTTP/1.0\r\n\r\n", 400,
                        "bad-request"),
                row("an absolute target with user info", "GET http://u@x/a HTTP/1.1\r\n" + host + "\r\n", 400,
                        "bad-request"),
                row("an https absolute target", "GET https://x/a HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                row("an authority-form target (CONNECT)", "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", 400,
                        "bad-request"),
                row("a target that is no form at all", "GET x/a HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                // header lines
                row("whitespace before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, "bad-request"),
                row("a header line without a colon", "GET / HTTP/1.1\r\n" + host + "X-A\r\n\r\n", 400, "bad-request"),
                row("an empty header name", "GET / HTTP/1.1\r\n" + host + ": v\r\n\r\n", 400, "bad-request"),
                row("a header name that is not a token", "GET / HTTP/1.1\r\n" + host + "X(A): v\r\n\r\n", 400,
                        "bad-request"),
                row("a non-ASCII header name", "GET / HTTP/1.1\r\n" + host + "X-\u00e9: v\r\n\r\n", 400,
                        "bad-request"),
                row("NUL in a value", "GET / HTTP/1.1\r\n" + host + "X-A: a\u0000b\r\n\r\n", 400, "bad-request"),
                row("a bare CR in a value", "GET / HTTP/1.1\r\n" + host + "X-A: a\rb\r\n\r\n", 400, "bad-request"),
                row("a bare CR at the end of a value", "GET / HTTP/1.1\r\n" + host + "X-A: a\r\r\n\r\n", 400,
                        "bad-request"),
                row("DEL in a value", "GET / HTTP/1.1\r\n" + host + "X-A: a\u007fb\r\n\r\n", 400, "bad-request"),
                row("a control byte in a value", "GET / HTTP/1.1\r\n" + host + "X-A: a\u001bb\r\n\r\n", 400,
                        "bad-request"),
                row("a folded line (obs-fold, SP)", "GET / HTTP/1.1\r\n" + host + "X-A: a\r\n b\r\n\r\n", 400,
                        "bad-request"),
                row("a folded line (obs-fold, HTAB)", "GET / HTTP/1.1\r\n" + host + "X-A: a\r\n\tb\r\n\r\n", 400,
                        "bad-request"),
                row("a bare LF after the request line", "GET / HTTP/1.1\n" + host + "\r\n", 400, "bad-request"),
                row("a bare LF after a field", "GET / HTTP/1.1\r\nHost: x\n\r\n", 400, "bad-request"),
                row("a bare LF as the blank line", "GET / HTTP/1.1\r\n" + host + "\n", 400, "bad-request"),
                row("a bare LF alone first", "\nGET / HTTP/1.1\r\n" + host + "\r\n", 400, "bad-request"),
                // limits
                row("a head over the limit", "GET / HTTP/1.1\r\n" + host + "X-Big: "
                        + "a".repeat(HttpLimits.MAX_HEADER_BYTES) + "\r\n\r\n", 431, "headers-too-large"),
                row("129 header fields", "GET / HTTP/1.1\r\n" + host + fields(128) + "\r\n", 431,
                        "headers-too-large"),
                // Host
                row("no Host in HTTP/1.1", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400, "bad-request"),
                row("two Hosts", "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, "bad-request"),
                row("two Hosts in HTTP/1.0", "GET / HTTP/1.0\r\nHost: x\r\nHost: x\r\n\r\n", 400, "bad-request"),
                row("an empty Host", "GET / HTTP/1.1\r\nHost: \r\n\r\n", 400, "bad-request"),
                row("a Host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "bad-request"),
                row("a Host with user info", "GET / HTTP/1.1\r\nHost: u@x\r\n\r\n", 400, "bad-request"),
                row("a Host with a path", "GET / HTTP/1.1\r\nHost: x/y\r\n\r\n", 400, "bad-request"),
                row("a Host with a port over 65535", "GET / HTTP/1.1\r\nHost: x:65536\r\n\r\n", 400, "bad-request"),
                row("a Host with an empty port", "GET / HTTP/1.1\r\nHost: x:\r\n\r\n", 400, "bad-request"),
                row("a Host with a letter in the port", "GET / HTTP/1.1\r\nHost: x:8o\r\n\r\n", 400, "bad-request"),
                row("a Host with an unclosed IPv6", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400, "bad-request"),
                row("a Host with an IPv6 zone", "GET / HTTP/1.1\r\nHost: [fe80::1%eth0]\r\n\r\n", 400,
                        "bad-request"),
                // Content-Length and Transfer-Encoding
                row("Content-Length abc", "POST / HTTP/1.1\r\n" + host + "Content-Length: abc\r\n\r\n", 400,
                        "bad-request"),
                row("Content-Length with a sign", "POST / HTTP/1.1\r\n" + host + "Content-Length: +5\r\n\r\n", 400,
                        "bad-request"),
                row("a negative Content-Length", "POST / HTTP/1.1\r\n" + host + "Content-Length: -1\r\n\r\n", 400,
                        "bad-request"),
                row("an empty Content-Length", "POST / HTTP/1.1\r\n" + host + "Content-Length:\r\n\r\n", 400,
                        "bad-request"),
                row("a Content-Length list", "POST / HTTP/1.1\r\n" + host + "Content-Length: 1, 1\r\n\r\n1", 400,
                        "bad-request"),
                row("two Content-Length fields", "POST / HTTP/1.1\r\n" + host
                        + "Content-Length: 1\r\nContent-Length: 1\r\n\r\n1", 400, "bad-request"),
                row("a Content-Length over 2^63-1", "POST / HTTP/1.1\r\n" + host
                        + "Content-Length: 9223372036854775808\r\n\r\n", 400, "bad-request"),
                row("Transfer-Encoding gzip", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip\r\n\r\n", 501,
                        "unsupported-transfer-coding"),
                row("Transfer-Encoding gzip, chunked", "POST / HTTP/1.1\r\n" + host
                        + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, "unsupported-transfer-coding"),
                row("two Transfer-Encoding fields", "POST / HTTP/1.1\r\n" + host
                        + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501,
                        "unsupported-transfer-coding"),
                row("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                        "bad-request"),
                row("Content-Length then Transfer-Encoding", "POST / HTTP/1.1\r\n" + host
                        + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
                        "conflicting-framing"),
                row("Transfer-Encoding then Content-Length", "POST / HTTP/1.1\r\n" + host
                        + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 400,
                        "conflicting-framing"),
                row("an unknown coding with Content-Length", "POST / HTTP/1.1\r\n" + host
                        + "Transfer-Encoding: gzip\r\nContent-Length: 4\r\n\r\n", 400, "conflicting-framing"),
                // Expect
                row("Expect other than 100-continue", "POST / HTTP/1.1\r\n" + host
                        + "Expect: 200-ok\r\nContent-Length: 1\r\n\r\n", 417, "expectation-failed"),
                // chunked bodies
                row("a chunk size that is not hex", chunked("zz\r\n"), 400, "bad-request"),
                row("an empty chunk size", chunked("\r\n"), 400, "bad-request"),
                row("a chunk size of 16 digits", chunked("0000000000000001\r\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("a chunk size with a sign", chunked("+1\r\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("a space after the chunk size", chunked("1 \r\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("a chunk-size line over the limit", chunked("1;a=" + "b".repeat(HttpLimits.MAX_CHUNK_LINE)
                        + "\r\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("an extension without a name", chunked("1;\r\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("an extension with a control byte", chunked("1;a=\"\u0001\"\r\nx\r\n0\r\n\r\n"), 400,
                        "bad-request"),
                row("an unterminated quoted extension", chunked("1;a=\"b\r\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("a bare LF after the chunk size", chunked("1\nx\r\n0\r\n\r\n"), 400, "bad-request"),
                row("a chunk longer than its size", chunked("1\r\nxy\r\n0\r\n\r\n"), 400, "bad-request"),
                row("a chunk without CRLF after its data", chunked("1\r\nx0\r\n\r\n"), 400, "bad-request"),
                row("a chunk followed by a bare LF", chunked("1\r\nx\n0\r\n\r\n"), 400, "bad-request"),
                row("a trailer with a bare CR", chunked("0\r\nX-T: a\rb\r\n\r\n"), 400, "bad-request"),
                row("a folded trailer", chunked("0\r\nX-T: a\r\n b\r\n\r\n"), 400, "bad-request"),
                row("a trailer without a colon", chunked("0\r\nX-T\r\n\r\n"), 400, "bad-request"),
                row("a trailer section over the limit", chunked("0\r\nX-T: "
                        + "a".repeat(HttpLimits.MAX_HEADER_BYTES) + "\r\n\r\n"), 431, "headers-too-large"),
                row("129 trailer fields", chunked("0\r\n" + fields(129) + "\r\n"), 431, "headers-too-large"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rejections")
    void aRequestBreakingARuleGetsOneRejectedAndNothingAfterIt(String what, String input, int status, String kind) {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes(input));
        List<Object> out = drain(ch);
        assertThat(out).isNotEmpty();
        assertThat(out.getLast()).isInstanceOfSatisfying(Http1Messages.Rejected.class, r -> {
            assertThat(r.status()).isEqualTo(status);
            assertThat(r.kind()).isEqualTo(kind);
            assertThat(r.message()).contains("expected");
        });
        assertThat(out.subList(0, out.size() - 1)).noneMatch(m -> m instanceof Http1Messages.Rejected);
        // The framing can no longer be trusted: a well-formed request after it is not decoded.
        ch.writeInbound(bytes(GET));
        assertThat(ch.finish()).isFalse();
        release(out);
    }

    @Test
    void theConflictingFramingMessageNamesBothFields() {
        List<String> t = decode("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n");
        assertThat(t).singleElement().asString().startsWith("rejected 400 conflicting-framing")
                .contains("Content-Length").contains("Transfer-Encoding");
    }

    @Test
    void theHttp2PrefaceIsToldPriorKnowledgeIsNotAccepted() {
        assertThat(decode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")).singleElement().asString()
                .startsWith("rejected 400 bad-request").contains("HTTP/2 with prior knowledge");
    }

    @Test
    void aRejectionMessageSaysWhatWasWrongAndWhatWasExpected() {
        assertThat(decode("GET / HTTP/1.1\r\nHost : x\r\n\r\n")).singleElement().asString()
                .isEqualTo("rejected 400 bad-request: whitespace between the header name 'Host' and its colon"
                        + " (expected name: value)");
        assertThat(decode("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n")).singleElement().asString()
                .isEqualTo("rejected 400 bad-request: invalid byte 0x0d (a CR not followed by LF) in the value of"
                        + " header 'x-a' (expected visible characters, SP, HTAB or bytes 0x80-0xff)");
    }

    // ---- what is accepted

    static Stream<Arguments> accepted() {
        return Stream.of(
                Arguments.of("a GET", GET, List.of("GET /orders/7?x=1 @provider:8080 {accept: */*, user-agent: curl/8.5}",
                        "END")),
                Arguments.of("a POST with a Content-Length body", POST, List.of(
                        "POST /orders @provider {content-type: application/json, content-length: 11}",
                        "body {\"id\": 7}\r\n", "END")),
                Arguments.of("a chunked PUT (extensions and trailers dropped)", CHUNKED, List.of(
                        "PUT /files/a @provider {transfer-encoding: chunked}", "body hello, world", "END")),
                Arguments.of("Content-Length 0", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                        List.of("POST / @x {content-length: 0}", "END")),
                Arguments.of("OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", List.of("OPTIONS * @x {}", "END")),
                Arguments.of("an absolute target naming the Host", "GET http://X:81/a?b HTTP/1.1\r\nHost: x:81\r\n\r\n",
                        List.of("GET /a?b @x:81 {}", "END")),
                Arguments.of("an absolute target without a path", "GET HTTP://x?q=1 HTTP/1.1\r\nHost: x\r\n\r\n",
                        List.of("GET /?q=1 @x {}", "END")),
                Arguments.of("HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", List.of("GET / @null close {}", "END")),
                Arguments.of("HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
                        List.of("GET / @null {connection: Keep-Alive}", "END")),
                Arguments.of("Connection: close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade, CLOSE\r\n\r\n",
                        List.of("GET / @x close {connection: upgrade, CLOSE}", "END")),
                Arguments.of("extension methods, some one byte off a common one", "PURGE /a HTTP/1.1\r\nHost: x\r\n\r\n"
                        + "XELETE / HTTP/1.1\r\nHost: x\r\n\r\nGEt / HTTP/1.1\r\nHost: x\r\n\r\n", List.of(
                        "PURGE /a @x {}", "END", "XELETE / @x {}", "END", "GEt / @x {}", "END")),
                Arguments.of("hosts of every form", "GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n"
                        + "GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\nGET / HTTP/1.1\r\nHost: a-b_c.d~e:0\r\n\r\n",
                        List.of("GET / @[2001:db8::1]:8080 {}", "END", "GET / @10.0.0.1 {}", "END",
                                "GET / @a-b_c.d~e:0 {}", "END")),
                Arguments.of("values with OWS, tabs and obs-text", "GET / HTTP/1.1\r\nHost:x\r\nX-A: \t a\tb \t\r\n"
                        + "X-B:\r\nX-C: caf\u00e9\r\n\r\n", List.of("GET / @x {x-a: a\tb, x-b: , x-c: caf\u00e9}", "END")),
                Arguments.of("a CRLF before the request line", "\r\n" + GET, List.of(
                        "GET /orders/7?x=1 @provider:8080 {accept: */*, user-agent: curl/8.5}", "END")),
                Arguments.of("128 header fields", "GET / HTTP/1.1\r\nHost: x\r\n" + fields(127) + "\r\n",
                        List.of("GET / @x " + fieldList(127), "END")),
                Arguments.of("a chunk size in upper-case hex with extensions", "POST / HTTP/1.1\r\nHost: x\r\n"
                        + "Transfer-Encoding: Chunked\r\n\r\nA ; a = b;c=\"d\\\"e\"\r\n0123456789\r\n0\r\n\r\n",
                        List.of("POST / @x {transfer-encoding: Chunked}", "body 0123456789", "END")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void aValidRequestIsDecodedToItsHeadBodyAndEnd(String what, String input, List<String> expected) {
        assertThat(decode(input)).containsExactlyElementsOf(expected);
    }

    @Test
    void aHeadRightAtTheByteLimitIsAcceptedAndOneByteMoreIsNot() {
        String start = "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ";
        int pad = HttpLimits.MAX_HEADER_BYTES - start.length() - 4;
        String atLimit = start + "a".repeat(pad) + "\r\n\r\n";
        assertThat(atLimit).hasSize(HttpLimits.MAX_HEADER_BYTES);
        assertThat(decode(atLimit)).last().isEqualTo("END");
        assertThat(decode(start + "a".repeat(pad + 1) + "\r\n\r\n")).singleElement().asString()
                .startsWith("rejected 431 headers-too-large");
    }

    @Test
    void aRequestLineRightAtItsLimitIsAcceptedAndOneByteMoreIsTooLong() {
        String target = "/" + "a".repeat(HttpLimits.MAX_INITIAL_LINE - "GET  HTTP/1.1".length() - 1);
        assertThat(("GET " + target + " HTTP/1.1")).hasSize(HttpLimits.MAX_INITIAL_LINE);
        assertThat(decode("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")).last().isEqualTo("END");
        assertThat(decode("GET " + target + "a HTTP/1.1\r\nHost: x\r\n\r\n")).singleElement().asString()
                .startsWith("rejected 414 uri-too-long");
    }

    @Test
    void aLongRequestLineIsRefusedBeforeItsEndArrives() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes("GET /" + "a".repeat(HttpLimits.MAX_INITIAL_LINE + 10)));
        assertThat(transcript(ch)).singleElement().asString().startsWith("rejected 414 uri-too-long");
        ch.finishAndReleaseAll();
    }

    @Test
    void aChunkSizeLineRightAtItsLimitIsAccepted() {
        String line = "1;a=" + "b".repeat(HttpLimits.MAX_CHUNK_LINE - 4);
        assertThat(decode(chunked(line + "\r\nx\r\n0\r\n\r\n"))).containsExactly(
                "POST / @x {transfer-encoding: chunked}", "body x", "END");
    }

    @Test
    void expect100ContinueIsFlaggedOnHttp11AndIgnoredOnHttp10() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n"));
        RequestHead h = ch.readInbound();
        assertThat(h.expectContinue()).isTrue();
        assertThat(h.get("expect")).isEqualTo("100-Continue"); // hop-by-hop: the forwarding rules drop it
        assertThat(ch.<Object>readInbound()).isNull(); // the body is not sent before the interim answer
        ch.writeInbound(bytes("x"));
        release(drain(ch));

        ch.writeInbound(bytes("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx"));
        RequestHead h10 = ch.readInbound();
        assertThat(h10.expectContinue()).isFalse();
        release(drain(ch));
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void commonMethodsAndNamesCostNoNewString() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        for (String m : List.of("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE")) {
            ch.writeInbound(bytes(m + " / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nX-Custom: 1\r\n\r\n"));
            RequestHead h = ch.readInbound();
            assertThat(h.method()).isSameAs(m); // literals are interned: the decoder's constants are the same
            assertThat(h.fields().name(0)).isSameAs("content-type");
            assertThat(h.fields().value(0)).isSameAs("text/plain");
            assertThat(h.path()).isSameAs("/");
            assertThat(ch.<Object>readInbound()).isSameAs(Http1Messages.END);
        }
        // An unknown name is lower-cased once per connection, then reused.
        ch.writeInbound(bytes("GET / HTTP/1.1\r\nHost: x\r\nX-Custom: 1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nx-CUSTOM: 2\r\n\r\n"));
        RequestHead a = ch.readInbound();
        ch.readInbound();
        RequestHead b = ch.readInbound();
        assertThat(a.fields().name(0)).isEqualTo("x-custom").isSameAs(b.fields().name(0));
        release(drain(ch));
        ch.finish();
    }

    @Test
    void hostBecomesTheAuthorityAndFramingFieldsStayAsReceived() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes("POST /a HTTP/1.1\r\nConnection: keep-alive\r\nHOST: Provider\r\n"
                + "Transfer-Encoding: chunked\r\nKeep-Alive: timeout=5\r\n\r\n0\r\n\r\n"));
        RequestHead h = ch.readInbound();
        assertThat(h.authority()).isEqualTo("Provider");
        assertThat(h.get("host")).isNull();
        assertThat(h.fields().toString())
                .isEqualTo("{connection: keep-alive, transfer-encoding: chunked, keep-alive: timeout=5}");
        assertThat(ch.<Object>readInbound()).isSameAs(Http1Messages.END);
        assertThat(ch.finish()).isFalse();
    }

    // ---- reads as they come

    @Test
    void theCommonSmallRequestsSplitAtEveryByteGiveTheSameResult() {
        for (String input : List.of(GET, POST, CHUNKED, GET + POST + CHUNKED)) {
            List<String> whole = decode(input);
            byte[] b = input.getBytes(StandardCharsets.ISO_8859_1);
            for (int at = 1; at < b.length; at++) {
                EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
                ch.writeInbound(bytes(b, 0, at));
                ch.writeInbound(bytes(b, at, b.length - at));
                assertThat(transcript(ch)).as("split at %d of %s", at, input).isEqualTo(whole);
                assertThat(ch.finish()).isFalse();
            }
            EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
            for (int i = 0; i < b.length; i++) {
                ch.writeInbound(bytes(b, i, 1));
            }
            assertThat(transcript(ch)).as("byte by byte").isEqualTo(whole);
            assertThat(ch.finish()).isFalse();
        }
    }

    @Test
    void pipelinedRequestsAreDecodedOneAfterTheOther() {
        assertThat(decode(GET + POST + CHUNKED + GET)).containsExactly(
                "GET /orders/7?x=1 @provider:8080 {accept: */*, user-agent: curl/8.5}", "END",
                "POST /orders @provider {content-type: application/json, content-length: 11}", "body {\"id\": 7}\r\n",
                "END",
                "PUT /files/a @provider {transfer-encoding: chunked}", "body hello, world", "END",
                "GET /orders/7?x=1 @provider:8080 {accept: */*, user-agent: curl/8.5}", "END");
    }

    @Test
    void aLargeChunkedBodyArrivesInPiecesAsItsBytesDo() {
        int size = 1 << 20;
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++) {
            body[i] = (byte) (i * 31 + (i >>> 9));
        }
        StringBuilder wire = new StringBuilder("POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
        int chunk = 100_000; // larger than MAX_CHUNK_BYTES: one chunk becomes several pieces
        for (int off = 0; off < size; off += chunk) {
            int n = Math.min(chunk, size - off);
            wire.append(Integer.toHexString(n)).append("\r\n")
                    .append(new String(body, off, n, StandardCharsets.ISO_8859_1)).append("\r\n");
        }
        wire.append("0\r\n\r\n");
        byte[] b = wire.toString().getBytes(StandardCharsets.ISO_8859_1);

        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        CRC32 crc = new CRC32();
        long total = 0;
        int pieces = 0;
        boolean end = false;
        for (int off = 0; off < b.length; off += 8000) {
            ch.writeInbound(bytes(b, off, Math.min(8000, b.length - off)));
            for (Object m; (m = ch.readInbound()) != null; ) {
                if (m instanceof ByteBuf piece) {
                    assertThat(piece.readableBytes()).isBetween(1, HttpLimits.MAX_CHUNK_BYTES);
                    byte[] got = new byte[piece.readableBytes()];
                    piece.readBytes(got);
                    crc.update(got);
                    total += got.length;
                    pieces++;
                    piece.release();
                } else if (m == Http1Messages.END) {
                    end = true;
                } else {
                    assertThat(m).isInstanceOf(RequestHead.class);
                }
            }
        }
        CRC32 expected = new CRC32();
        expected.update(body);
        assertThat(end).isTrue();
        assertThat(total).isEqualTo(size);
        assertThat(crc.getValue()).isEqualTo(expected.getValue());
        assertThat(pieces).isGreaterThan(size / 8000);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void chunkDataIsPassedOnWithoutWaitingForTheWholeChunk() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes(chunked("100000\r\n" + "a".repeat(1000))));
        assertThat(transcript(ch)).containsExactly("POST / @x {transfer-encoding: chunked}", "body " + "a".repeat(1000));
        ch.writeInbound(bytes("b".repeat(10)));
        assertThat(transcript(ch)).containsExactly("body " + "b".repeat(10));
        ch.finishAndReleaseAll();
    }

    @Test
    void aContentLengthBodyLargerThanAPieceIsPassedOnInPiecesOfAtMostTheLimit() {
        int size = HttpLimits.MAX_CHUNK_BYTES * 2 + 5;
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + size + "\r\n\r\n" + "z".repeat(size)));
        List<Object> out = drain(ch);
        assertThat(out).hasSize(5);
        assertThat(out.subList(1, 4)).extracting(m -> ((ByteBuf) m).readableBytes())
                .containsExactly(HttpLimits.MAX_CHUNK_BYTES, HttpLimits.MAX_CHUNK_BYTES, 5);
        assertThat(out.get(4)).isSameAs(Http1Messages.END);
        release(out);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void bodyPiecesShareMemoryWithTheReadBuffer() {
        String head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ByteBuf in = bytes(head + "hello");
        ch.writeInbound(in);
        List<Object> out = drain(ch);
        ByteBuf body = (ByteBuf) out.get(1);
        assertThat(body.toString(StandardCharsets.US_ASCII)).isEqualTo("hello");
        in.setByte(head.length(), 'J'); // the read buffer lives on while the slice does
        assertThat(body.toString(StandardCharsets.US_ASCII)).isEqualTo("Jello");
        release(out);

        // A chunked body too, when the chunk's data comes in a read of its own.
        ch.writeInbound(bytes("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n"));
        ByteBuf data = bytes("hello");
        ch.writeInbound(data);
        out = drain(ch);
        ByteBuf piece = (ByteBuf) out.get(1);
        data.setByte(0, 'J');
        assertThat(piece.toString(StandardCharsets.US_ASCII)).isEqualTo("Jello");
        release(out);
        ch.writeInbound(bytes("\r\n0\r\n\r\n"));
        assertThat(transcript(ch)).containsExactly("END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aConnectionClosedInTheMiddleOfARequestEndsItWithARejectedNotAnEnd() {
        for (String cut : List.of("GET / HTTP/1.1\r\nHo", "GET / HTT",
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhel",
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")) {
            EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
            ch.writeInbound(bytes(cut));
            ch.finish();
            List<String> t = transcript(ch);
            assertThat(t).as(cut).last().asString().startsWith("rejected 400 bad-request: the connection closed");
            assertThat(t).doesNotContain("END");
        }
        // Between requests a close is no error.
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes(GET));
        release(drain(ch));
        assertThat(ch.finish()).isFalse();
    }

    // ---- support, shared with the other Http1 tests

    static String chunked(String body) {
        return "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + body;
    }

    static String fields(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append("X-F").append(i).append(": v\r\n");
        }
        return b.toString();
    }

    static String fieldList(int n) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ", ").append("x-f").append(i).append(": v");
        }
        return b.append('}').toString();
    }

    /** Latin-1 bytes in a buffer of the default allocator, so that the leak detector tracks it. */
    static ByteBuf bytes(String s) {
        byte[] b = s.getBytes(StandardCharsets.ISO_8859_1);
        return bytes(b, 0, b.length);
    }

    static ByteBuf bytes(byte[] b, int off, int len) {
        return ByteBufAllocator.DEFAULT.directBuffer(Math.max(len, 1)).writeBytes(b, off, len);
    }

    /** Decodes one input written at once and closes the channel: the transcript of everything emitted. */
    List<String> decode(String input) {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(bytes(input));
        ch.finish();
        return transcript(ch);
    }

    /** Everything emitted so far, in order; not released. */
    static List<Object> drain(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        for (Object m; (m = ch.readInbound()) != null; ) {
            out.add(m);
        }
        return out;
    }

    static void release(List<Object> out) {
        for (Object m : out) {
            if (m instanceof ByteBuf b) {
                b.release();
            }
        }
    }

    /**
     * Everything emitted so far as text (released): a head as {@code METHOD path @authority [close] [expect-100]
     * {fields}} or {@code status [close] {fields}}, consecutive body pieces as one {@code body ...}, {@code END}, and
     * {@code rejected status kind: message}.
     */
    static List<String> transcript(EmbeddedChannel ch) {
        List<String> t = new ArrayList<>();
        for (Object m; (m = ch.readInbound()) != null; ) {
            String s;
            if (m instanceof ByteBuf b) {
                s = "body " + b.toString(StandardCharsets.ISO_8859_1);
                b.release();
                if (!t.isEmpty() && t.getLast().startsWith("body ")) {
                    t.set(t.size() - 1, t.getLast() + s.substring(5));
                    continue;
                }
            } else if (m instanceof RequestHead h) {
                s = h.method() + " " + h.path() + " @" + h.authority() + (h.keepAlive() ? "" : " close")
                        + (h.expectContinue() ? " expect-100" : "") + " " + h.fields();
            } else if (m instanceof ResponseHead h) {
                s = h.status() + (h.keepAlive() ? "" : " close") + " " + h.fields();
            } else if (m instanceof Http1Messages.Rejected r) {
                s = "rejected " + r.status() + " " + r.kind() + ": " + r.message();
            } else {
                s = String.valueOf(m);
            }
            t.add(s);
        }
        return t;
    }
}
