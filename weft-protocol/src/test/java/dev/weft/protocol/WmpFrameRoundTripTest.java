package dev.weft.protocol;

import dev.weft.protocol.WmpTestSupport.Decoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static dev.weft.protocol.WmpTestSupport.bytes;
import static dev.weft.protocol.WmpTestSupport.encode;
import static dev.weft.protocol.WmpTestSupport.releaseAll;
import static dev.weft.protocol.WmpTestSupport.sampleFrames;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WmpFrameRoundTripTest {

    /** Sample indexes with a description for the test name; the frames built to describe them are released. */
    static Stream<Arguments> samples() {
        List<WmpFrame> frames = sampleFrames();
        List<Arguments> arguments = IntStream.range(0, frames.size())
                .mapToObj(i -> Arguments.of(i, frames.get(i).type() + " on stream " + frames.get(i).streamId()))
                .toList();
        releaseAll(frames);
        return arguments.stream();
    }

    @ParameterizedTest(name = "{1} (sample {0}) decodes to an equal frame")
    @MethodSource("samples")
    void every_frame_type_survives_a_round_trip(int sample, String description) {
        List<WmpFrame> expected = sampleFrames();
        List<WmpFrame> toSend = sampleFrames();
        WmpFrame frame = toSend.get(sample);
        int predicted = WmpFrameEncoder.encodedSize(frame);
        ByteBuf wire = encode(frame);
        releaseAll(toSend.subList(0, sample));
        releaseAll(toSend.subList(sample + 1, toSend.size()));
        assertThat(wire.readableBytes()).as("encodedSize").isEqualTo(predicted);

        try (Decoding d = new Decoding()) {
            List<WmpFrame> decoded = d.feed(wire).frames();
            assertThat(decoded).containsExactly(expected.get(sample));
            assertThat(d.channel.isOpen()).isTrue();
            assertThat(d.metrics.framesIn()).isEqualTo(1);
            assertThat(d.metrics.bytesIn()).isEqualTo(predicted);
            assertThat(d.metrics.totalErrors()).isZero();
            releaseAll(decoded);
        } finally {
            releaseAll(expected);
        }
    }

    @ParameterizedTest(name = "{1} (sample {0}) split at every byte boundary decodes to the same frame")
    @MethodSource("samples")
    void a_frame_split_at_any_byte_boundary_decodes_the_same(int sample, String description) {
        List<WmpFrame> expected = sampleFrames();
        List<WmpFrame> toSend = sampleFrames();
        ByteBuf wire = encode(new WmpCodecMetrics(), toSend.subList(sample, sample + 1));
        releaseAll(toSend.subList(0, sample));
        releaseAll(toSend.subList(sample + 1, toSend.size()));
        WmpFrame want = expected.get(sample);
        int length = wire.readableBytes();
        try {
            for (int split = 1; split < length; split++) {
                try (Decoding d = new Decoding()) {
                    d.feed(wire.retainedSlice(0, split));
                    assertThat(d.frames()).as("frame after only %d of %d bytes", split, length).isEmpty();
                    d.feed(wire.retainedSlice(split, length - split));
                    List<WmpFrame> decoded = d.frames();
                    assertThat(decoded).as("split at %d", split).containsExactly(want);
                    releaseAll(decoded);
                }
            }
            try (Decoding d = new Decoding()) {
                List<WmpFrame> decoded = new ArrayList<>();
                for (int i = 0; i < length; i++) {
                    d.feed(wire.retainedSlice(i, 1));
                    decoded.addAll(d.frames());
                    assertThat(decoded).as("frames after %d of %d bytes", i + 1, length)
                            .hasSize(i == length - 1 ? 1 : 0);
                }
                assertThat(decoded).containsExactly(want);
                assertThat(d.metrics.totalErrors()).isZero();
                releaseAll(decoded);
            }
        } finally {
            wire.release();
            releaseAll(expected);
        }
    }

    @Test
    void many_frames_in_one_read_decode_in_order() {
        int rounds = 20;
        List<WmpFrame> expected = new ArrayList<>();
        List<WmpFrame> toSend = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            expected.addAll(sampleFrames());
            toSend.addAll(sampleFrames());
        }
        WmpCodecMetrics encoderMetrics = new WmpCodecMetrics();
        ByteBuf wire = encode(encoderMetrics, toSend);
        int length = wire.readableBytes();
        assertThat(encoderMetrics.framesOut()).isEqualTo(expected.size());
        assertThat(encoderMetrics.bytesOut()).isEqualTo(length);

        try (Decoding d = new Decoding()) {
            List<WmpFrame> decoded = d.feed(wire).frames();
            assertThat(decoded).containsExactlyElementsOf(expected);
            assertThat(d.metrics.framesIn()).isEqualTo(expected.size());
            assertThat(d.metrics.bytesIn()).isEqualTo(length);
            releaseAll(decoded);
        } finally {
            releaseAll(expected);
        }
    }

    @Test
    void frames_cut_across_reads_of_odd_sizes_decode_in_order() {
        List<WmpFrame> expected = new ArrayList<>();
        List<WmpFrame> toSend = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            expected.addAll(sampleFrames());
            toSend.addAll(sampleFrames());
        }
        ByteBuf wire = encode(new WmpCodecMetrics(), toSend);
        int[] readSizes = {1, 7, 16, 17, 333, 4096, 3};
        try (Decoding d = new Decoding()) {
            List<WmpFrame> decoded = new ArrayList<>();
            for (int i = 0; wire.isReadable(); i++) {
                d.feed(wire.readRetainedSlice(Math.min(readSizes[i % readSizes.length], wire.readableBytes())));
                decoded.addAll(d.frames());
            }
            assertThat(decoded).containsExactlyElementsOf(expected);
            releaseAll(decoded);
        } finally {
            wire.release();
            releaseAll(expected);
        }
    }

    @Test
    void a_body_at_the_size_limit_arriving_in_64_KiB_reads_decodes_whole() {
        byte[] content = new byte[WmpLimits.DEFAULT_MAX_FRAME_BODY_BYTES];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 31);
        }
        ByteBuf wire = encode(new WmpData(11, true, WmpTestSupport.ALLOC.buffer(content.length).writeBytes(content)));
        try (Decoding d = new Decoding()) {
            while (wire.isReadable()) {
                d.feed(wire.readRetainedSlice(Math.min(64 * 1024, wire.readableBytes())));
            }
            List<WmpFrame> decoded = d.frames();
            WmpData want = new WmpData(11, true, Unpooled.wrappedBuffer(content));
            assertThat(decoded).containsExactly(want);
            releaseAll(decoded);
            want.release();
        } finally {
            wire.release();
        }
    }

    @Test
    void a_decoded_body_shares_memory_with_the_bytes_read() {
        ByteBuf wire = encode(new WmpData(5, true, bytes("original")));
        wire.retain(); // keep a reference of our own to write through after the decoder is done
        int bodyIndex = wire.readerIndex() + WmpWire.HEAD_LENGTH;
        try (Decoding d = new Decoding()) {
            d.feed(wire);
            WmpData data = (WmpData) d.frames().getFirst();
            wire.setByte(bodyIndex, 'O');
            assertThat(data.body().toString(StandardCharsets.US_ASCII)).as("a copy would still say 'original'")
                    .isEqualTo("Original");
            data.release();
        } finally {
            wire.release();
        }
    }

    @Test
    void the_encoder_passes_a_large_body_on_without_copying_it() {
        ByteBuf body = WmpTestSupport.ALLOC.buffer(WmpFrameEncoder.COPY_BODY_LIMIT + 1);
        body.writeZero(WmpFrameEncoder.COPY_BODY_LIMIT + 1);
        EmbeddedChannel channel = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
        channel.writeOutbound(new WmpData(3, false, body));
        ByteBuf head = channel.readOutbound();
        ByteBuf passed = channel.readOutbound();
        try {
            assertThat(head.readableBytes()).isEqualTo(WmpWire.HEAD_LENGTH);
            assertThat(passed).isSameAs(body);
            assertThat(body.refCnt()).as("the reference moved, none was added").isEqualTo(1);
            assertThat(channel.<Object>readOutbound()).isNull();
        } finally {
            head.release();
            passed.release();
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void the_encoder_copies_a_small_body_behind_its_head_and_releases_it() {
        ByteBuf body = bytes("twenty bytes of body");
        EmbeddedChannel channel = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
        channel.writeOutbound(new WmpData(3, false, body));
        ByteBuf frame = channel.readOutbound();
        try {
            assertThat(channel.<Object>readOutbound()).as("one buffer per small frame").isNull();
            assertThat(frame.readableBytes()).isEqualTo(WmpWire.HEAD_LENGTH + 20);
            assertThat(frame.toString(WmpWire.HEAD_LENGTH, 20, StandardCharsets.US_ASCII))
                    .isEqualTo("twenty bytes of body");
            assertThat(body.refCnt()).as("the encoder released the copied body").isZero();
        } finally {
            frame.release();
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void the_encoder_sends_no_body_buffer_for_an_empty_body_and_releases_it() {
        ByteBuf empty = WmpTestSupport.ALLOC.buffer(16);
        EmbeddedChannel channel = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
        channel.writeOutbound(new WmpResponse(1, true, 204, new WmpHeaders(), empty));
        ByteBuf head = channel.readOutbound();
        try {
            assertThat(channel.<Object>readOutbound()).isNull();
            assertThat(empty.refCnt()).isZero();
        } finally {
            head.release();
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void a_frame_that_cannot_be_encoded_fails_the_write_and_releases_its_body() {
        ByteBuf body = bytes("body");
        WmpCodecMetrics metrics = new WmpCodecMetrics();
        EmbeddedChannel channel = new EmbeddedChannel(new WmpFrameEncoder(metrics));
        assertThatThrownBy(() -> channel.writeOutbound(new WmpResponse(1, true, 42, new WmpHeaders(), body)))
                .isInstanceOf(EncoderException.class)
                .hasMessageContaining("status 42 on stream 1 (expected 100..999)");
        assertThat(body.refCnt()).isZero();
        assertThat(channel.<Object>readOutbound()).isNull();
        assertThat(metrics.framesOut()).isZero();
        channel.finishAndReleaseAll();
    }

    @Test
    void a_header_block_over_64_KiB_is_refused_by_the_encoder() {
        WmpHeaders huge = new WmpHeaders().add("x-big", "v".repeat(70_000));
        WmpRequest request = new WmpRequest(1, true, "GET", "p", "/", huge, Unpooled.EMPTY_BUFFER);
        assertThatThrownBy(() -> WmpFrameEncoder.encodeHead(ByteBufAllocator.DEFAULT, request))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("header block of 70014 bytes on stream 1 (expected at most 65535)");
    }

    @Test
    void goaway_debug_text_over_256_bytes_is_cut_at_a_character_boundary() {
        // 'ü' is two bytes: 200 of them cannot be cut at byte 256 without splitting one, so the cut lands on 256.
        String debug = "ü".repeat(200);
        ByteBuf wire = encode(new WmpGoAway(3, WmpError.INTERNAL_ERROR, debug));
        assertThat(wire.readableBytes()).isEqualTo(WmpWire.HEAD_LENGTH + 256);
        try (Decoding d = new Decoding()) {
            assertThat(d.feed(wire).frames()).containsExactly(new WmpGoAway(3, WmpError.INTERNAL_ERROR, "ü".repeat(128)));
        }
        ByteBuf odd = encode(new WmpGoAway(3, WmpError.INTERNAL_ERROR, "a" + debug));
        assertThat(odd.readableBytes()).as("cut before the split character").isEqualTo(WmpWire.HEAD_LENGTH + 255);
        odd.release();
    }

    @Test
    void well_known_methods_travel_as_codes_and_others_as_strings() {
        for (String method : List.of("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT")) {
            ByteBuf head = WmpFrameEncoder.encodeHead(ByteBufAllocator.DEFAULT,
                    new WmpRequest(1, true, method, "", "", new WmpHeaders(), Unpooled.EMPTY_BUFFER));
            assertThat(head.getUnsignedShort(WmpWire.OFFSET_CODE)).as(method).isBetween(1, 9);
            assertThat(head.getUnsignedShort(WmpWire.OFFSET_HEADER_BLOCK_LENGTH)).as("authority and path only").isEqualTo(2);
            head.release();
        }
        ByteBuf literal = WmpFrameEncoder.encodeHead(ByteBufAllocator.DEFAULT,
                new WmpRequest(1, true, "get", "", "", new WmpHeaders(), Unpooled.EMPTY_BUFFER));
        assertThat(literal.getUnsignedShort(WmpWire.OFFSET_CODE)).as("methods are case-sensitive").isZero();
        assertThat(literal.getUnsignedShort(WmpWire.OFFSET_HEADER_BLOCK_LENGTH)).isEqualTo(2 + 4);
        literal.release();
    }

    @Test
    void install_puts_a_working_codec_in_the_pipeline_under_its_names() {
        WmpCodecMetrics metrics = new WmpCodecMetrics();
        EmbeddedChannel channel = new EmbeddedChannel();
        WmpCodec.install(channel.pipeline(), WmpLimits.defaults(), metrics);
        assertThat(channel.pipeline().names()).contains(WmpCodec.DECODER_NAME, WmpCodec.ENCODER_NAME);
        assertThat(channel.pipeline().get(WmpCodec.DECODER_NAME)).isInstanceOf(WmpFrameDecoder.class);
        assertThat(channel.pipeline().get(WmpCodec.ENCODER_NAME)).isInstanceOf(WmpFrameEncoder.class);

        // Loop the channel's own output back into it: what it writes must be what it reads.
        List<WmpFrame> expected = sampleFrames();
        for (WmpFrame frame : sampleFrames()) {
            channel.writeOutbound(frame);
        }
        for (Object out; (out = channel.readOutbound()) != null; ) {
            channel.writeInbound(out);
        }
        List<WmpFrame> decoded = new ArrayList<>();
        for (WmpFrame f; (f = channel.readInbound()) != null; ) {
            decoded.add(f);
        }
        assertThat(decoded).containsExactlyElementsOf(expected);
        assertThat(metrics.framesOut()).isEqualTo(expected.size());
        assertThat(metrics.framesIn()).isEqualTo(expected.size());
        assertThat(metrics.bytesIn()).isEqualTo(metrics.bytesOut());
        releaseAll(decoded);
        releaseAll(expected);
        channel.finishAndReleaseAll();
    }
}
