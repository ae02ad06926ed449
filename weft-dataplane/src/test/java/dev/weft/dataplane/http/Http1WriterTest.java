package dev.weft.dataplane.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link Http1Writer} writes, byte for byte, what Netty's HTTP/1.1 encoders write for the same whole message. */
class Http1WriterTest {

    @Test
    void aResponseIsWrittenAsNettysEncoderWritesIt() {
        var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND, body("no such thing"));
        r.headers().set("content-type", "text/plain").set("content-length", 13).add("via", "1.1 weft")
                .add("x-multi", "a").add("x-multi", "b");
        assertThat(direct(r)).isEqualTo(netty(new EmbeddedChannel(new HttpResponseEncoder()), r));
    }

    @Test
    void aRequestWithAnEmptyBodyIsWrittenAsNettysEncoderWritesIt() {
        var r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/orders/7?x=%20y", Unpooled.EMPTY_BUFFER);
        r.headers().set("host", "provider").set("x-weft-caller", "consumer");
        assertThat(direct(r)).isEqualTo(netty(new EmbeddedChannel(new HttpRequestEncoder()), r));
    }

    @Test
    void aStatusWithAnUnusualReasonAndNonAsciiTargetKeepTheirBytes() {
        var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, new HttpResponseStatus(599, "Weird Reason"), body(""));
        r.headers().set("content-length", 0);
        assertThat(direct(r)).isEqualTo(netty(new EmbeddedChannel(new HttpResponseEncoder()), r));
        var q = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/caf\u00e9", body("x"));
        q.headers().set("content-length", 1);
        assertThat(direct(q)).isEqualTo(netty(new EmbeddedChannel(new HttpRequestEncoder()), q));
    }

    @Test
    void onlySmallBodiesAndOriginFormTargetsAreTaken() {
        var get = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/", Unpooled.EMPTY_BUFFER);
        var absolute = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "http://h", Unpooled.EMPTY_BUFFER);
        ByteBuf big = Unpooled.wrappedBuffer(new byte[Http1Writer.COPY_LIMIT + 1]);
        assertThat(Http1Writer.fits(get, Unpooled.EMPTY_BUFFER)).isTrue();
        assertThat(Http1Writer.fits(get, big)).isFalse();
        assertThat(Http1Writer.fits(absolute, Unpooled.EMPTY_BUFFER)).isFalse();
        big.release();
    }

    private static ByteBuf body(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    /** Writes with Http1Writer; the message's body is released by it. */
    private static String direct(FullHttpMessage m) {
        ByteBuf out = Http1Writer.message(ByteBufAllocator.DEFAULT, m, m.content().retain());
        try {
            return out.toString(StandardCharsets.ISO_8859_1);
        } finally {
            out.release();
        }
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
