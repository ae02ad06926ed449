package dev.weft.dataplane.http;

import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import static dev.weft.dataplane.http.Http1RequestDecoderTest.bytes;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.drain;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.release;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.transcript;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Http1Writer}: Weft heads written so that Weft's decoders read back the same head, byte for byte as Netty's
 * HTTP/1.1 encoders would write the same message, and never with a byte that could end a line early.
 */
class Http1WriterTest {

    // ---- Weft heads

    static WmpHeaders fields(String... nameValues) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < nameValues.length; i += 2) {
            h.add(nameValues[i], nameValues[i + 1]);
        }
        return h;
    }

    static RequestHead get(String method, String path) {
        return new RequestHead(method, "provider", path, new WmpHeaders());
    }

    static Stream<Arguments> injections() {
        return Stream.<Arguments>of(
                row("CR LF in the method", a -> Http1Writer.requestHead(a, get("GET / HTTP/1.1\r\nX:", "/"), "p", fields()),
                        "method"),
                row("SP in the method", a -> Http1Writer.requestHead(a, get("GET /", "/"), "p", fields()), "method"),
                row("CR LF in the target", a -> Http1Writer.requestHead(a, get("GET", "/a\r\nX-Injected: 1"), "p",
                        fields()), "request target"),
                row("LF in the target", a -> Http1Writer.requestHead(a, get("GET", "/a\nb"), "p", fields()),
                        "request target"),
                row("NUL in the target", a -> Http1Writer.requestHead(a, get("GET", "/a\u0000"), "p", fields()),
                        "request target"),
                row("SP in the target", a -> Http1Writer.requestHead(a, get("GET", "/a HTTP/1.0"), "p", fields()),
                        "request target"),
                row("CR LF in the authority", a -> Http1Writer.requestHead(a, get("GET", "/"), "p\r\nX-Injected: 1",
                        fields()), "authority"),
                row("NUL in the authority", a -> Http1Writer.requestHead(a, get("GET", "/"), "p\u0000", fields()),
                        "authority"),
                row("CR LF in a name", a -> Http1Writer.requestHead(a, get("GET", "/"), "p",
                        fields("x-a: 1\r\nx-b", "v")), "header name"),
                row("a colon in a name", a -> Http1Writer.requestHead(a, get("GET", "/"), "p", fields("x-a:", "v")),
                        "header name"),
                row("an empty name", a -> Http1Writer.requestHead(a, get("GET", "/"), "p", fields("", "v")),
                        "header name"),
                row("CR LF in a value", a -> Http1Writer.requestHead(a, get("GET", "/"), "p",
                        fields("x-a", "1\r\nX-Injected: 1")), "CR"),
                row("a bare LF in a value", a -> Http1Writer.requestHead(a, get("GET", "/"), "p",
                        fields("x-a", "1\nX-Injected: 1")), "LF"),
                row("a bare CR in a value", a -> Http1Writer.requestHead(a, get("GET", "/"), "p",
                        fields("x-a", "1\r")), "CR"),
                row("NUL in a value", a -> Http1Writer.requestHead(a, get("GET", "/"), "p", fields("x-a", "a\u0000")),
                        "NUL"),
                row("a character above U+00FF in a value (U+010A ends in 0x0A)", a -> Http1Writer.requestHead(a,
                        get("GET", "/"), "p", fields("x-a", "\u010a")), "U+010A"),
                row("a host field beside the authority", a -> Http1Writer.requestHead(a, get("GET", "/"), "p",
                        fields("host", "evil")), "host"),
                row("CR LF in an answer's value", a -> Http1Writer.responseHead(a,
                        new ResponseHead(200, fields("set-cookie", "a\r\n\r\n<html>"))), "CR"),
                row("LF in an answer's name", a -> Http1Writer.responseHead(a,
                        new ResponseHead(200, fields("x\n", "v"))), "header name"),
                row("status 99", a -> Http1Writer.responseHead(a, new ResponseHead(99, fields())), "status 99"),
                row("status 600", a -> Http1Writer.responseHead(a, new ResponseHead(600, fields())), "status 600"));
    }

    static Arguments row(String what, Function<ByteBufAllocator, ByteBuf> write, String messagePart) {
        return Arguments.of(what, write, messagePart);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("injections")
    void theWriterRefusesAnyByteThatCouldEndALineEarly(String what, Function<ByteBufAllocator, ByteBuf> write,
                                                       String messagePart) {
        assertThatThrownBy(() -> write.apply(ByteBufAllocator.DEFAULT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(messagePart).hasMessageContaining("expected")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\r", "\n"));
    }

    @Test
    void aRefusedMessageReleasesTheBodyItWasGiven() {
        ByteBuf body = bytes("hello");
        RequestHead head = new RequestHead("GET", "p", "/", fields("x-a", "\r\n"));
        assertThatThrownBy(() -> Http1Writer.request(ByteBufAllocator.DEFAULT, head, body))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(body.refCnt()).isZero();
        ByteBuf big = bytes("z".repeat(Http1Writer.COPY_LIMIT + 1));
        assertThatThrownBy(() -> Http1Writer.response(ByteBufAllocator.DEFAULT, new ResponseHead(1000, fields()), big))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(big.refCnt()).isZero();
    }

    @Test
    void aRequestWrittenByTheWriterIsDecodedToTheSameHeadAndBody() {
        WmpHeaders f = fields("content-type", "application/json", "x-weft-caller", "consumer", "x-latin",
                "caf\u00e9", "content-length", "9");
        RequestHead head = new RequestHead("POST", "provider:8080", "/orders?id=7&x=%20", f);
        ByteBuf wire = Http1Writer.request(ByteBufAllocator.DEFAULT, head, bytes("{\"id\": 7}"));
        assertThat(wire.toString(StandardCharsets.ISO_8859_1)).isEqualTo("POST /orders?id=7&x=%20 HTTP/1.1\r\n"
                + "host: provider:8080\r\ncontent-type: application/json\r\nx-weft-caller: consumer\r\n"
                + "x-latin: caf\u00e9\r\ncontent-length: 9\r\n\r\n{\"id\": 7}");
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(wire);
        List<Object> out = drain(ch);
        RequestHead back = (RequestHead) out.get(0);
        assertThat(back.method()).isEqualTo(head.method());
        assertThat(back.path()).isEqualTo(head.path());
        assertThat(back.authority()).isEqualTo(head.authority());
        assertThat(back.fields()).isEqualTo(f);
        assertThat(((ByteBuf) out.get(1)).toString(StandardCharsets.UTF_8)).isEqualTo("{\"id\": 7}");
        assertThat(out.get(2)).isSameAs(Http1Messages.END);
        release(out);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aVettedFieldIsNotScannedAgainButOneReplacedOrAddedSinceIs() {
        WmpHeaders f = fields("accept", "*/*", "x-a", "1");
        f.markVetted();
        ByteBuf ok = Http1Writer.requestHead(ByteBufAllocator.DEFAULT, get("GET", "/"), "p", f);
        assertThat(ok.toString(StandardCharsets.ISO_8859_1)).isEqualTo("GET / HTTP/1.1\r\nhost: p\r\naccept: */*\r\n"
                + "x-a: 1\r\n\r\n");
        ok.release();
        f.value(1, "1\r\nX-Injected: 1");
        assertThatThrownBy(() -> Http1Writer.requestHead(ByteBufAllocator.DEFAULT, get("GET", "/"), "p", f))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("x-a");
        WmpHeaders g = fields("accept", "*/*");
        g.markVetted();
        g.add("x-b", "\n");
        assertThatThrownBy(() -> Http1Writer.requestHead(ByteBufAllocator.DEFAULT, get("GET", "/"), "p", g))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("x-b");
    }

    @Test
    void aTraceContextHeldAsNumbersIsWrittenAsItsFieldAfterTheOthers() {
        RequestHead head = new RequestHead("GET", "provider", "/", fields("accept", "*/*"));
        head.traceparent(new Traceparent(0x4bf92f3577b34da6L, 0xa3ce929d0e0e4736L, 0x00f067aa0ba902b7L, 1));
        ByteBuf wire = Http1Writer.request(ByteBufAllocator.DEFAULT, head, bytes(""));
        assertThat(wire.toString(StandardCharsets.ISO_8859_1)).isEqualTo("GET / HTTP/1.1\r\nhost: provider\r\n"
                + "accept: */*\r\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n");
        wire.release();
    }

    @Test
    void anAnswerWrittenByTheWriterIsDecodedToTheSameHeadAndBody() {
        WmpHeaders f = fields("content-type", "text/plain", "set-cookie", "a=1", "set-cookie", "b=2",
                "content-length", "5");
        ByteBuf wire = Http1Writer.response(ByteBufAllocator.DEFAULT, new ResponseHead(404, f), bytes("gone!"));
        assertThat(wire.toString(StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 404 Not Found\r\n");
        Http1ResponseDecoder d = new Http1ResponseDecoder();
        d.expectHeadAnswer(false);
        EmbeddedChannel ch = new EmbeddedChannel(d);
        ch.writeInbound(wire);
        assertThat(transcript(ch)).containsExactly("404 " + f, "body gone!", "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void anAnswerIsWrittenAsNettysEncoderWritesTheSameMessage() {
        var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CREATED, body("made"));
        r.headers().add("content-length", "4").add("location", "/orders/8").add("via", "1.1 weft");
        ByteBuf ours = Http1Writer.response(ByteBufAllocator.DEFAULT,
                new ResponseHead(201, fields("content-length", "4", "location", "/orders/8", "via", "1.1 weft")),
                bytes("made"));
        try {
            assertThat(ours.toString(StandardCharsets.ISO_8859_1))
                    .isEqualTo(netty(new EmbeddedChannel(new HttpResponseEncoder()), r));
        } finally {
            ours.release();
        }
    }

    @Test
    void statusLinesCarryNettysReasonPhrase() {
        for (int code : new int[] {100, 200, 204, 301, 404, 431, 502, 599}) {
            ByteBuf b = Http1Writer.responseHead(ByteBufAllocator.DEFAULT, new ResponseHead(code, fields()));
            assertThat(b.toString(StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 " + code + " "
                    + HttpResponseStatus.valueOf(code).reasonPhrase() + "\r\n\r\n");
            b.release();
        }
    }

    @Test
    void aLargeBodyIsComposedBehindTheHeadNotCopied() {
        ByteBuf body = bytes("x".repeat(Http1Writer.COPY_LIMIT + 1));
        ByteBuf wire = Http1Writer.request(ByteBufAllocator.DEFAULT, get("PUT", "/big"), "p",
                fields("content-length", String.valueOf(Http1Writer.COPY_LIMIT + 1)), body);
        assertThat(wire).isInstanceOf(CompositeByteBuf.class);
        body.setByte(0, 'Y'); // the body's own memory is what gets written
        String s = wire.toString(StandardCharsets.ISO_8859_1);
        assertThat(s).startsWith("PUT /big HTTP/1.1\r\nhost: p\r\ncontent-length: 8193\r\n\r\nYx");
        assertThat(s).hasSize(s.indexOf("\r\n\r\n") + 4 + Http1Writer.COPY_LIMIT + 1);
        wire.release();
        assertThat(body.refCnt()).isZero();
    }

    @Test
    void chunksAreFramedWithTheirHexSizeAndALargeOneIsNotCopied() {
        ByteBuf small = Http1Writer.chunk(ByteBufAllocator.DEFAULT, bytes("hello"));
        assertThat(small.toString(StandardCharsets.US_ASCII)).isEqualTo("5\r\nhello\r\n");
        small.release();
        assertThat(Http1Writer.chunk(ByteBufAllocator.DEFAULT, bytes(""))).isSameAs(Unpooled.EMPTY_BUFFER);

        ByteBuf data = bytes("a".repeat(70_000));
        ByteBuf big = Http1Writer.chunk(ByteBufAllocator.DEFAULT, data);
        assertThat(big).isInstanceOf(CompositeByteBuf.class);
        data.setByte(0, 'B');
        String s = big.toString(StandardCharsets.US_ASCII);
        assertThat(s).startsWith("11170\r\nBaaa").endsWith("aaa\r\n").hasSize(5 + 2 + 70_000 + 2);
        big.release();
        assertThat(data.refCnt()).isZero();

        ByteBuf last = Http1Writer.lastChunk();
        assertThat(last.toString(StandardCharsets.US_ASCII)).isEqualTo("0\r\n\r\n");
        last.release(); // a shared buffer: releasing a duplicate of it is a no-op
        assertThat(Http1Writer.lastChunk().readableBytes()).isEqualTo(5);
    }

    @Test
    void aStreamedChunkedRequestWrittenByTheWriterIsDecodedToTheSameBody() {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder());
        ch.writeInbound(Http1Writer.requestHead(ByteBufAllocator.DEFAULT, get("POST", "/up"), "provider",
                fields("transfer-encoding", "chunked")));
        StringBuilder sent = new StringBuilder();
        for (int n : new int[] {1, 15, 16, 4096, Http1Writer.COPY_LIMIT + 1, 100_000}) {
            String piece = String.valueOf((char) ('a' + n % 26)).repeat(n);
            sent.append(piece);
            ch.writeInbound(Http1Writer.chunk(ByteBufAllocator.DEFAULT, bytes(piece)));
        }
        ch.writeInbound(Http1Writer.lastChunk());
        assertThat(transcript(ch)).containsExactly("POST /up @provider {transfer-encoding: chunked}",
                "body " + sent, "END");
        assertThat(ch.finish()).isFalse();
    }

    private static ByteBuf body(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    /** Writes with Netty's encoder; the message is released by it. */
    private static String netty(EmbeddedChannel ch, FullHttpMessage m) {
        ch.writeOutbound(m);
        StringBuilder sb = new StringBuilder();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            sb.append(b.toString(StandardCharsets.ISO_8859_1));
            b.release();
        }
        ch.finishAndReleaseAll();
        return sb.toString();
    }
}
