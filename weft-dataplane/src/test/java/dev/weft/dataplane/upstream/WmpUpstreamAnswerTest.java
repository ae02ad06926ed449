package dev.weft.dataplane.upstream;

import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The consumer side's WMP answer boundary on the real call ({@link WmpUpstream}'s) and dialling {@link MeshSession},
 * in an EmbeddedChannel: an answer {@code WmpAnswerValidator} refuses resets its own stream ({@code CANCEL
 * PROTOCOL_ERROR}), is counted under {@code boundary="wmp_answer"}, and reaches the exchange as a 502
 * {@code upstream-protocol-error} (or, once its head went on, as an error that cuts the answer); body bytes are checked
 * against the content-length before any is passed on; the connection and its other streams carry on.
 *
 * <p>Buffers: every body the peer sends comes from {@link #body} (pooled, so the leak detector sees it too) and is
 * checked after the test to have been released, by the listener (as the relay would) or by the call that refused it.
 */
class WmpUpstreamAnswerTest {
    private final Rejections rejected = new Rejections();
    private final List<ByteBuf> bodies = new ArrayList<>();
    /** What the exchange was told, in order. */
    private final List<String> told = new ArrayList<>();
    private final MeshSession session = new MeshSession(null, "10.0.0.5:7001", rejected);
    private final EmbeddedChannel mesh = new EmbeddedChannel(session);

    /** The exchange's side of a call: notes what it hears and releases each body, as the relay would once written. */
    private final UpstreamListener exchange = new UpstreamListener() {
        @Override
        public void onResponseHead(ResponseHead head, ByteBuf body, boolean end) {
            told.add("head " + head.status() + " with " + body.readableBytes() + (end ? " end" : ""));
            body.release();
        }

        @Override
        public void onResponseData(ByteBuf body, boolean end) {
            told.add("data " + body.readableBytes() + (end ? " end" : ""));
            body.release();
        }

        @Override
        public void onWritable() {
        }

        @Override
        public void onReset(String reason, boolean refused) {
            told.add("reset");
        }

        @Override
        public void onError(ExchangeError error) {
            told.add("error " + error.status() + " " + error.kind());
        }
    };

    @AfterEach
    void everyBodyWasReleased() {
        mesh.finishAndReleaseAll();
        for (ByteBuf b : bodies) {
            assertThat(b.refCnt()).as("a body the peer sent was neither passed on nor released").isZero();
        }
    }

    private ByteBuf body(String s) {
        ByteBuf b = ByteBufUtil.writeUtf8(PooledByteBufAllocator.DEFAULT, s);
        bodies.add(b);
        return b;
    }

    private static WmpHeaders fields(String... pairs) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    /** A call whose request (a whole {@code method} with no body) went out; returns its stream id. */
    private int send(String method) throws ExchangeError {
        WmpUpstream.Call call = new WmpUpstream.Call(session, exchange, WmpLimits.defaults(), rejected);
        call.sendHead(new RequestHead(method, "provider", "/", new WmpHeaders()), "provider", "127.0.0.1",
                Unpooled.EMPTY_BUFFER, true);
        WmpRequest sent = mesh.readOutbound();
        sent.release();
        return sent.streamId();
    }

    /** The frames the session wrote to the peer since the last look. */
    private List<WmpFrame> written() {
        List<WmpFrame> out = new ArrayList<>();
        for (WmpFrame f; (f = mesh.readOutbound()) != null; ) {
            f.release();
            out.add(f);
        }
        return out;
    }

    private void assertResetAlone(int stream) {
        List<WmpFrame> out = written();
        assertThat(out).as("one CANCEL, no GOAWAY").hasSize(1);
        assertThat(out.getFirst()).isInstanceOf(WmpCancel.class);
        assertThat(((WmpCancel) out.getFirst()).streamId()).isEqualTo(stream);
        assertThat(((WmpCancel) out.getFirst()).error()).isEqualTo(WmpError.PROTOCOL_ERROR);
        assertThat(mesh.isOpen()).as("the shared connection carries on").isTrue();
    }

    @Test
    void aFramingFieldInAnAnswerResetsItsStreamAloneAndTheCallerHearsA502() throws Exception {
        int first = send("GET");
        mesh.writeInbound(new WmpResponse(first, true, 200, fields("transfer-encoding", "chunked"),
                body("5\r\nhello\r\n0\r\n\r\n")));

        assertResetAlone(first);
        assertThat(told).containsExactly("error 502 upstream-protocol-error");
        assertThat(rejected.count(Reason.ANSWER_FRAMING_FIELD)).isEqualTo(1);

        int next = send("GET");
        mesh.writeInbound(new WmpResponse(next, true, 200, fields("content-length", "2"), body("ok")));
        assertThat(told).containsExactly("error 502 upstream-protocol-error", "head 200 with 2 end");
        assertThat(written()).as("nothing sent for an answer that passes").isEmpty();
    }

    @Test
    void aCrLfInAFieldValueOrAnInterimStatusIsRefusedBeforeTheExchangeSeesIt() throws Exception {
        int crlf = send("GET");
        mesh.writeInbound(new WmpResponse(crlf, true, 200, fields("x-a", "1\r\nset-cookie: evil=1"), body("")));
        assertResetAlone(crlf);
        int upgrade = send("GET");
        mesh.writeInbound(new WmpResponse(upgrade, true, 101, fields("upgrade", "h2c"), body("")));
        assertResetAlone(upgrade);

        assertThat(told).containsExactly("error 502 upstream-protocol-error", "error 502 upstream-protocol-error");
        assertThat(rejected.count(Reason.ANSWER_BAD_FIELD_VALUE)).isEqualTo(1);
        assertThat(rejected.count(Reason.ANSWER_BAD_STATUS)).isEqualTo(1);
    }

    @Test
    void aBodyIsHeldToItsContentLengthFrameByFrameBeforeAnyByteOfTheFrameIsPassedOn() throws Exception {
        int past = send("GET");
        mesh.writeInbound(new WmpResponse(past, false, 200, fields("content-length", "5"), body("hel")));
        mesh.writeInbound(new WmpData(past, false, body("lo")));
        mesh.writeInbound(new WmpData(past, true, body("HTTP/1.1 200 OK\r\n\r\n")));
        assertResetAlone(past);
        int shortOne = send("GET");
        mesh.writeInbound(new WmpResponse(shortOne, false, 200, fields("content-length", "10"), body("abc")));
        mesh.writeInbound(new WmpData(shortOne, true, body("de")));
        assertResetAlone(shortOne);

        assertThat(told).as("the bytes past the length never reached the exchange, and the short answer never ended")
                .containsExactly("head 200 with 3", "data 2", "error 502 upstream-protocol-error",
                        "head 200 with 3", "error 502 upstream-protocol-error");
        assertThat(rejected.count(Reason.ANSWER_BAD_CONTENT_LENGTH)).isEqualTo(2);
    }

    @Test
    void theBodyOfAnAnswerHttp11GivesNoneIsDroppedNotWrittenNorRefused() throws Exception {
        int declared = send("HEAD");
        mesh.writeInbound(new WmpResponse(declared, true, 200, fields("content-length", "1234"), body("")));
        int error = send("HEAD");
        mesh.writeInbound(new WmpResponse(error, true, 503, fields("x-weft-error", "inbound-limit"),
                body("weft: inbound concurrency limit 8 reached\n")));
        int streamed = send("GET");
        mesh.writeInbound(new WmpResponse(streamed, false, 304, fields("content-length", "5"), body("")));
        mesh.writeInbound(new WmpData(streamed, true, body("hello")));

        assertThat(told).containsExactly("head 200 with 0 end", "head 503 with 0 end", "head 304 with 0",
                "data 0 end");
        assertThat(written()).as("no stream was reset").isEmpty();
        for (Reason r : Reason.values()) {
            assertThat(rejected.count(r)).as(r.label()).isZero();
        }
    }

    @Test
    void framesThatFollowARefusedAnswerAreLateAndDroppedNotAConnectionError() throws Exception {
        int stream = send("GET");
        mesh.writeInbound(new WmpResponse(stream, false, 200, fields("connection", "close"), body("part")));
        assertResetAlone(stream);
        mesh.writeInbound(new WmpData(stream, false, body("rest")));
        mesh.writeInbound(new WmpData(stream, true, body("end")));

        assertThat(told).containsExactly("error 502 upstream-protocol-error");
        assertThat(written()).as("no GOAWAY: the frames crossed our CANCEL").isEmpty();
        assertThat(mesh.isOpen()).isTrue();
        assertThat(rejected.count(Reason.UNOPENED_STREAM)).isZero();
    }
}
