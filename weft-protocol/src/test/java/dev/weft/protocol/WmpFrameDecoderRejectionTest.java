package dev.weft.protocol;

import dev.weft.protocol.WmpTestSupport.Decoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static dev.weft.protocol.WmpTestSupport.encode;
import static dev.weft.protocol.WmpTestSupport.releaseAll;
import static org.assertj.core.api.Assertions.assertThat;

/** Malformed input from a peer: the decoder must count it, answer GOAWAY, close, and never throw. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WmpFrameDecoderRejectionTest {
    private static final int REQUEST = WmpFrameType.REQUEST.code();
    private static final int RESPONSE = WmpFrameType.RESPONSE.code();
    private static final int DATA = WmpFrameType.DATA.code();
    private static final int PING = WmpFrameType.PING.code();
    private static final int CANCEL = WmpFrameType.CANCEL.code();
    private static final int GOAWAY = WmpFrameType.GOAWAY.code();
    private static final int WINDOW_UPDATE = WmpFrameType.WINDOW_UPDATE.code();

    /** A hand-made frame, so the tests do not depend on the encoder getting things right (or refusing them). */
    static ByteBuf rawFrame(int magic, int version, int type, int flags, int streamId, int code, int headerBlockLength,
                         long bodyLength, int... rest) {
        ByteBuf b = WmpTestSupport.ALLOC.buffer(16 + rest.length);
        b.writeByte(magic).writeByte(version).writeByte(type).writeByte(flags).writeInt(streamId)
                .writeShort(code).writeShort(headerBlockLength).writeInt((int) bodyLength);
        for (int r : rest) {
            b.writeByte(r);
        }
        return b;
    }

    static ByteBuf frame(int type, int flags, int streamId, int code, int headerBlockLength, long bodyLength,
                         int... rest) {
        return rawFrame(0x57, 1, type, flags, streamId, code, headerBlockLength, bodyLength, rest);
    }

    static Arguments reject(String what, Supplier<ByteBuf> input, WmpDecodeError kind, WmpError goAway,
                            String debug) {
        return Arguments.of(what, input, kind, goAway, debug);
    }

    static Stream<Arguments> malformedInputs() {
        int[] authorityAndPath = {1, 'p', 1, '/'};
        return Stream.of(
                reject("an HTTP request", () -> WmpTestSupport.bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                        WmpDecodeError.BAD_MAGIC, WmpError.PROTOCOL_ERROR, "bad magic 0x47 (expected 0x57)"),
                reject("a frame with bad magic", () -> rawFrame(0x48, 1, REQUEST, 0, 1, 1, 0, 0),
                        WmpDecodeError.BAD_MAGIC, WmpError.PROTOCOL_ERROR, "bad magic 0x48 (expected 0x57)"),
                reject("version 2", () -> rawFrame(0x57, 2, PING, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0),
                        WmpDecodeError.UNSUPPORTED_VERSION, WmpError.UNSUPPORTED_VERSION,
                        "unsupported version 2 (expected 1)"),
                reject("frame type 9", () -> frame(9, 0, 1, 0, 0, 0),
                        WmpDecodeError.UNKNOWN_TYPE, WmpError.PROTOCOL_ERROR, "unknown frame type 9 (expected 1..8)"),
                reject("frame type 0", () -> frame(0, 0, 1, 0, 0, 0),
                        WmpDecodeError.UNKNOWN_TYPE, WmpError.PROTOCOL_ERROR, "unknown frame type 0"),
                reject("a reserved flag", () -> frame(DATA, 0x03, 1, 0, 0, 0),
                        WmpDecodeError.BAD_FLAGS, WmpError.PROTOCOL_ERROR, "reserved flags 0x03 set on DATA"),
                reject("END_STREAM on a PING", () -> frame(PING, 0x01, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0),
                        WmpDecodeError.BAD_FLAGS, WmpError.PROTOCOL_ERROR, "END_STREAM on PING"),
                reject("a header block over the limit", () -> frame(REQUEST, 0, 1, 1, 16 * 1024 + 1, 0),
                        WmpDecodeError.FRAME_TOO_LARGE, WmpError.FRAME_TOO_LARGE,
                        "REQUEST header block of 16385 bytes (expected at most 16384)"),
                reject("a declared 2 GB body", () -> frame(REQUEST, 0, 1, 2, 2, 0x8000_0000L),
                        WmpDecodeError.FRAME_TOO_LARGE, WmpError.FRAME_TOO_LARGE,
                        "REQUEST body of 2147483648 bytes (expected at most 1048576)"),
                reject("a declared 4 GB DATA body", () -> frame(DATA, 0, 1, 0, 0, 0xFFFF_FFFFL),
                        WmpDecodeError.FRAME_TOO_LARGE, WmpError.FRAME_TOO_LARGE, "DATA body of 4294967295 bytes"),
                reject("a GOAWAY with 257 bytes of debug text", () -> frame(GOAWAY, 0, 0, 0, 0, 257),
                        WmpDecodeError.FRAME_TOO_LARGE, WmpError.FRAME_TOO_LARGE, "GOAWAY debug text of 257 bytes"),
                reject("129 header fields", () -> {
                            ByteBuf b = frame(RESPONSE, 0, 1, 200, 129, 0);
                            for (int i = 0; i < 129; i++) {
                                b.writeByte(0x80 | 2);
                            }
                            return b;
                        },
                        WmpDecodeError.TOO_MANY_HEADERS, WmpError.FRAME_TOO_LARGE,
                        "more than 128 header fields on stream 1"),
                reject("a varint cut off by the end of the header block", () -> frame(REQUEST, 0, 1, 1, 1, 0, 0x85),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "truncated length of authority at the end of the header block"),
                reject("a varint longer than 3 bytes", () -> frame(REQUEST, 0, 1, 1, 4, 0, 0x80, 0x80, 0x80, 0x01),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "length of authority longer than 3 bytes"),
                reject("a string running past the header block", () -> frame(REQUEST, 0, 1, 1, 3, 0, 10, 'a', 'b'),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "authority of 10 bytes overruns the header block (2 bytes left)"),
                reject("a header value cut short", () -> frame(REQUEST, 0, 1, 1, 7, 0, 1, 'p', 1, '/', 0, 1, 'x'),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "truncated length of header value"),
                reject("a static index the table does not have", () -> frame(REQUEST, 0, 1, 1, 5, 0,
                                concat(authorityAndPath, 0x80 | 127)),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "unknown static table index 127 on stream 1"),
                reject("an empty literal header name", () -> frame(REQUEST, 0, 1, 1, 7, 0,
                                concat(authorityAndPath, 0, 0, 0)),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR, "empty header name"),
                reject("an upper-case literal header name", () -> frame(REQUEST, 0, 1, 1, 9, 0,
                                concat(authorityAndPath, 0, 1, 'X', 1, 'v')),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "header name 'X' on stream 1 is not lower case"),
                reject("a REQUEST with an empty header block", () -> frame(REQUEST, 0, 1, 1, 0, 0),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "truncated length of authority"),
                reject("DATA with a header block", () -> frame(DATA, 0, 1, 0, 3, 0, 0x80 | 2, 0x80 | 3, 0x80 | 4),
                        WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
                        "DATA with a header block of 3 bytes (expected none)"),
                reject("a stream id with the top bit set", () -> frame(DATA, 0, 0x8000_0001, 0, 0, 0),
                        WmpDecodeError.BAD_STREAM_ID, WmpError.PROTOCOL_ERROR,
                        "stream id 0x80000001 has the reserved top bit set on DATA"),
                reject("a REQUEST on stream 0", () -> frame(REQUEST, 0, 0, 1, 2, 0, 0, 0),
                        WmpDecodeError.BAD_STREAM_ID, WmpError.PROTOCOL_ERROR, "REQUEST on stream 0"),
                reject("a PING on stream 3", () -> frame(PING, 0, 3, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0),
                        WmpDecodeError.BAD_STREAM_ID, WmpError.PROTOCOL_ERROR, "PING on stream 3 (expected stream 0)"),
                reject("a PING with 7 payload bytes", () -> frame(PING, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "PING body of 7 bytes (expected 8)"),
                reject("a CANCEL with a body", () -> frame(CANCEL, 0, 1, 4, 0, 1, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "CANCEL body of 1 bytes (expected 0)"),
                reject("a zero window increment", () -> frame(WINDOW_UPDATE, 0, 1, 0, 0, 4, 0, 0, 0, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "window increment 0 on stream 1"),
                reject("a window increment with the top bit set", () -> frame(WINDOW_UPDATE, 0, 0, 0, 0, 4,
                                0x80, 0, 0, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "window increment 2147483648"),
                reject("method code 10", () -> frame(REQUEST, 0, 1, 10, 2, 0, 0, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "unknown method code 10 on stream 1"),
                reject("status 42", () -> frame(RESPONSE, 0, 1, 42, 0, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "status 42 on stream 1 (expected 100..999)"),
                reject("a DATA frame with a code", () -> frame(DATA, 0, 1, 7, 0, 0),
                        WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR, "DATA with code 7 (expected 0)"));
    }

    private static int[] concat(int[] head, int... tail) {
        int[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }

    @ParameterizedTest(name = "{0} is counted as {2}, answered with GOAWAY {3} and closes the connection")
    @MethodSource("malformedInputs")
    void malformed_input_closes_the_connection_with_a_goaway(String what, Supplier<ByteBuf> input,
                                                             WmpDecodeError kind, WmpError goAwayError, String debug) {
        try (Decoding d = new Decoding()) {
            d.feed(input.get());
            d.channel.checkException();
            d.channel.runPendingTasks();

            assertThat(d.frames()).isEmpty();
            assertThat(d.channel.isOpen()).as("channel open").isFalse();
            List<WmpFrame> written = d.written();
            assertThat(written).hasSize(1);
            WmpGoAway goAway = (WmpGoAway) written.getFirst();
            assertThat(goAway.error()).isEqualTo(goAwayError);
            assertThat(goAway.debug()).contains(debug);
            assertThat(goAway.lastStreamId()).isZero();
            assertThat(d.metrics.errors(kind)).isEqualTo(1);
            assertThat(d.metrics.totalErrors()).isEqualTo(1);
            assertThat(d.metrics.framesIn()).isZero();
        }
    }

    @ParameterizedTest(name = "{0} is rejected even when it arrives one byte at a time")
    @MethodSource("malformedInputs")
    void malformed_input_is_rejected_however_it_is_split(String what, Supplier<ByteBuf> input,
                                                         WmpDecodeError kind, WmpError goAwayError, String debug) {
        ByteBuf bytes = input.get();
        try (Decoding d = new Decoding()) {
            while (bytes.isReadable() && d.channel.isOpen()) {
                d.feed(bytes.readRetainedSlice(1));
                d.channel.runPendingTasks();
            }
            assertThat(d.frames()).isEmpty();
            assertThat(d.channel.isOpen()).isFalse();
            assertThat(d.metrics.errors(kind)).isEqualTo(1);
            assertThat(((WmpGoAway) d.written().getFirst()).debug()).contains(debug);
        } finally {
            bytes.release();
        }
    }

    @Test
    void a_peer_speaking_http_is_turned_away_on_its_first_byte() {
        try (Decoding d = new Decoding()) {
            d.feed(WmpTestSupport.bytes("P"));
            assertThat(d.channel.isOpen()).isFalse();
            assertThat(d.metrics.errors(WmpDecodeError.BAD_MAGIC)).isEqualTo(1);
        }
    }

    @Test
    void a_declared_2_GB_body_is_refused_from_the_head_alone_without_allocating_for_it() {
        TrackingAllocator allocator = new TrackingAllocator();
        try (Decoding d = new Decoding()) {
            d.channel.config().setAllocator(allocator);
            d.feed(frame(DATA, 0, 1, 0, 0, 0x7FFF_FFFFL));
            assertThat(d.channel.isOpen()).as("did not wait for the body").isFalse();
            assertThat(d.metrics.errors(WmpDecodeError.FRAME_TOO_LARGE)).isEqualTo(1);
            assertThat(allocator.largestRequest).as("largest buffer asked of the allocator").isLessThan(1024);
        }
    }

    @Test
    void a_tighter_header_field_limit_is_enforced() {
        try (Decoding d = new Decoding(new WmpLimits(1024, 1024, 2))) {
            WmpHeaders three = new WmpHeaders().add("accept", "*/*").add("via", "x").add("x-a", "b");
            d.feed(encode(new WmpResponse(1, true, 200, three, Unpooled.EMPTY_BUFFER)));
            assertThat(d.frames()).isEmpty();
            assertThat(d.metrics.errors(WmpDecodeError.TOO_MANY_HEADERS)).isEqualTo(1);
            assertThat(((WmpGoAway) d.written().getFirst()).debug()).isEqualTo("more than 2 header fields on stream 1");
        }
    }

    @Test
    void frames_before_the_bad_one_are_delivered_and_the_goaway_names_the_last_stream() {
        List<WmpFrame> good = List.of(
                new WmpRequest(1, true, "GET", "a", "/", new WmpHeaders(), Unpooled.EMPTY_BUFFER),
                new WmpRequest(7, true, "GET", "a", "/", new WmpHeaders(), Unpooled.EMPTY_BUFFER),
                new WmpPing(1, false));
        ByteBuf wire = Unpooled.wrappedBuffer(encode(new WmpCodecMetrics(), good), rawFrame(0x57, 9, 1, 0, 0, 0, 0, 0),
                encode(new WmpPing(2, false)));
        try (Decoding d = new Decoding()) {
            d.feed(wire);
            List<WmpFrame> decoded = d.frames();
            assertThat(decoded).containsExactlyElementsOf(good);
            WmpGoAway goAway = (WmpGoAway) d.written().getFirst();
            assertThat(goAway).isEqualTo(new WmpGoAway(7, WmpError.UNSUPPORTED_VERSION,
                    "unsupported version 9 (expected 1)"));
            assertThat(d.channel.isOpen()).isFalse();
            assertThat(d.metrics.framesIn()).isEqualTo(3);
            releaseAll(decoded);
        }
    }

    @Test
    void input_after_a_rejected_frame_is_ignored_while_the_close_is_still_pending() {
        // Holds the close back, as a slow transport would, so later reads still reach the decoder.
        ChannelOutboundHandlerAdapter closeNever = new ChannelOutboundHandlerAdapter() {
            @Override
            public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
                promise.setSuccess();
            }
        };
        WmpCodecMetrics metrics = new WmpCodecMetrics();
        EmbeddedChannel channel = new EmbeddedChannel(closeNever, new WmpFrameDecoder(WmpLimits.defaults(), metrics));
        channel.writeInbound(frame(42, 0, 1, 0, 0, 0));
        assertThat(channel.isOpen()).isTrue();
        channel.writeInbound(encode(new WmpData(1, true, WmpTestSupport.bytes("late"))));
        channel.writeInbound(rawFrame(0x00, 0, 0, 0, 0, 0, 0, 0));
        assertThat(channel.<Object>readInbound()).isNull();
        assertThat(metrics.totalErrors()).as("only the first problem is counted").isEqualTo(1);
        assertThat(metrics.framesIn()).isZero();
        ByteBuf goAway = channel.readOutbound();
        assertThat(channel.<Object>readOutbound()).as("a single GOAWAY").isNull();
        goAway.release();
        channel.checkException();
        channel.finishAndReleaseAll();
    }

    @Test
    void a_connection_closed_mid_frame_is_not_an_error() {
        ByteBuf wire = encode(new WmpData(1, true, WmpTestSupport.bytes("0123456789")));
        try (Decoding d = new Decoding()) {
            d.feed(wire.readRetainedSlice(20));
            d.channel.close();
            d.channel.checkException();
            assertThat(d.metrics.totalErrors()).isZero();
            assertThat(d.frames()).isEmpty();
        } finally {
            wire.release();
        }
    }

    /** Remembers the largest buffer anyone asked for, to prove a declared length never becomes an allocation. */
    private static final class TrackingAllocator extends AbstractByteBufAllocator {
        int largestRequest;

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            largestRequest = Math.max(largestRequest, initialCapacity);
            return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            largestRequest = Math.max(largestRequest, initialCapacity);
            return new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }
}
