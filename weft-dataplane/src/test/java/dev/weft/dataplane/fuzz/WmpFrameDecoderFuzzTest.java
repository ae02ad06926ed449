package dev.weft.dataplane.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpDecodeError;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameDecoder;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpPing;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.protocol.WmpWindowUpdate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any bytes at all through the WMP frame decoder (docs/protocol.md, "Frame layout" and "Error handling"): no
 * exception escapes; what comes out is well-formed frames, then either nothing (the rest is a frame not yet complete)
 * or one rejection, counted as a {@link WmpDecodeError}, answered with one GOAWAY whose code is the one the
 * protocol's table names for it and whose last stream id is the highest REQUEST decoded, after which the connection
 * is closed; every frame decoded re-encodes to the same frame; the same bytes split into other reads give the same
 * frames and the same error; and every byte read is released once its frames are (checked on each input, not only
 * by the leak detector at the end of the class, so that a fuzzer's finding names the input that leaked).
 *
 * <p>Fuzzing: {@code JAZZER_FUZZ=1 mvn -pl weft-dataplane -am test -Dtest=WmpFrameDecoderFuzzTest#<target>
 * -Dsurefire.failIfNoSpecifiedTests=false} (docs/operations.md, "Fuzzing"). A plain build replays the corpus
 * (WmpFrameDecoderFuzzTestInputs, valid frame sequences and findings) and
 * {@link #seededMutationsOfTheCorpusKeepEveryRule}.
 *
 * <p>Thread: the test's, which is each EmbeddedChannel's loop. Buffers: the input is copied into pooled direct
 * buffers (the kind the leak detector tracks), given to the decoder, and checked to be released at the end.
 */
class WmpFrameDecoderFuzzTest {
    private static final String TARGET = "anyBytesDecodeToFramesOrOneNamedError";
    /** docs/protocol.md's table "Counted as / GOAWAY code", written out here so that the enum is checked against it. */
    private static final Map<WmpDecodeError, WmpError> GOAWAY_CODE = new EnumMap<>(Map.of(
            WmpDecodeError.BAD_MAGIC, WmpError.PROTOCOL_ERROR,
            WmpDecodeError.UNSUPPORTED_VERSION, WmpError.UNSUPPORTED_VERSION,
            WmpDecodeError.UNKNOWN_TYPE, WmpError.PROTOCOL_ERROR,
            WmpDecodeError.BAD_FLAGS, WmpError.PROTOCOL_ERROR,
            WmpDecodeError.FRAME_TOO_LARGE, WmpError.FRAME_TOO_LARGE,
            WmpDecodeError.TOO_MANY_HEADERS, WmpError.FRAME_TOO_LARGE,
            WmpDecodeError.MALFORMED_HEADER_BLOCK, WmpError.PROTOCOL_ERROR,
            WmpDecodeError.BAD_STREAM_ID, WmpError.PROTOCOL_ERROR,
            WmpDecodeError.BAD_PAYLOAD, WmpError.PROTOCOL_ERROR));
    /** Small limits, so that short inputs reach the size rules too. */
    private static final WmpLimits LIMITS = new WmpLimits(512, 4096, 8);
    /**
     * Re-encoded frames are decoded with room to spare: a string of invalid UTF-8 is read as U+FFFD (three bytes for
     * one), so an input's header block may come back up to three times as long.
     */
    private static final WmpLimits ROOMY = new WmpLimits(0xFFFF, 4096, 8);

    /** Jazzer instruments only the protocol's classes (see {@link Mutator#instrumentOnly}). */
    @BeforeAll
    static void instrumentOnlyTheProtocol() {
        Mutator.instrumentOnly("dev.weft.protocol.**");
    }

    @FuzzTest(maxDuration = "4m")
    void anyBytesDecodeToFramesOrOneNamedError(byte[] input) {
        Decoded whole = decode(input, Math.max(1, input.length), LIMITS);
        // The last byte picks a second way to split the same bytes into reads (1 to 16 bytes each).
        int read = input.length == 0 ? 1 : 1 + (input[input.length - 1] & 0x0F);
        Decoded split = decode(input, read, LIMITS);
        assertThat(split.frames).as("frames decoded in reads of %d bytes", read).isEqualTo(whole.frames);
        assertThat(split.error).as("error in reads of %d bytes", read).isEqualTo(whole.error);
        checkError(input, whole);
    }

    @Test
    void seededMutationsOfTheCorpusKeepEveryRule() {
        // 0x57 'W' and 0x01 keep a frame's head recognisable; 0x80 and 0x7f are varint and table edges.
        Mutator m = new Mutator(20261202, new byte[]{0x57, 0x01, 0x00, (byte) 0x80, 0x7f, (byte) 0xff, '\r', '\n'});
        m.mutateEach(Mutator.corpus(WmpFrameDecoderFuzzTest.class, TARGET), 100, this::anyBytesDecodeToFramesOrOneNamedError);
    }

    /** What one decoding produced: each frame described, and the error counted (null if none). */
    private record Decoded(List<String> frames, WmpDecodeError error, List<WmpFrame> written, long bytesIn, int maxRequestId,
                           boolean open) {}

    private static Decoded decode(byte[] input, int read, WmpLimits limits) {
        WmpCodecMetrics metrics = new WmpCodecMetrics();
        EmbeddedChannel ch = new EmbeddedChannel(new WmpFrameDecoder(limits, metrics));
        List<ByteBuf> given = new ArrayList<>();
        List<String> frames = new ArrayList<>();
        int maxRequestId = 0;
        for (int off = 0; off < input.length && ch.isOpen(); off += read) {
            int n = Math.min(read, input.length - off);
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n).writeBytes(input, off, n);
            given.add(b);
            ch.writeInbound(b); // rethrows whatever reached the end of the pipeline
            for (WmpFrame f; (f = ch.readInbound()) != null; ) {
                try {
                    checkWellFormed(f, limits);
                    frames.add(describe(f));
                    if (f instanceof WmpRequest r) {
                        maxRequestId = Math.max(maxRequestId, r.streamId());
                    }
                    checkRoundTrip(f);
                } finally {
                    f.release();
                }
            }
        }
        boolean open = ch.isOpen();
        List<WmpFrame> written = peerReads(ch);
        ch.finishAndReleaseAll();
        for (ByteBuf b : given) {
            assertThat(b.refCnt()).as("input bytes still held after the decoder and its frames are gone").isZero();
        }
        WmpDecodeError error = null;
        for (WmpDecodeError kind : WmpDecodeError.values()) {
            if (metrics.errors(kind) > 0) {
                assertThat(error).as("a second error counted: %s", kind).isNull();
                assertThat(metrics.errors(kind)).isEqualTo(1);
                error = kind;
            }
        }
        return new Decoded(frames, error, written, metrics.bytesIn(), maxRequestId, open);
    }

    /** The frame-level rules of docs/protocol.md that every decoded frame must keep, whatever the input. */
    private static void checkWellFormed(WmpFrame f, WmpLimits limits) {
        switch (f) {
            case WmpRequest r -> {
                assertThat(r.streamId()).isPositive();
                assertThat(r.method()).isNotEmpty();
                checkFields(r.headers(), limits);
                assertThat(r.body().readableBytes()).isLessThanOrEqualTo(limits.maxFrameBodyBytes());
            }
            case WmpResponse r -> {
                assertThat(r.streamId()).isPositive();
                assertThat(r.status()).isBetween(100, 999);
                checkFields(r.headers(), limits);
                assertThat(r.body().readableBytes()).isLessThanOrEqualTo(limits.maxFrameBodyBytes());
            }
            case WmpData d -> {
                assertThat(d.streamId()).isPositive();
                assertThat(d.body().readableBytes()).isLessThanOrEqualTo(limits.maxFrameBodyBytes());
            }
            case WmpCancel c -> assertThat(c.streamId()).isPositive();
            case WmpGoAway g -> assertThat(g.lastStreamId()).isNotNegative();
            case WmpWindowUpdate w -> {
                assertThat(w.streamId()).isNotNegative();
                assertThat(w.increment()).isPositive();
            }
            case WmpPing _ -> { } // any payload
        }
    }

    private static void checkFields(WmpHeaders h, WmpLimits limits) {
        assertThat(h.size()).isLessThanOrEqualTo(limits.maxHeaderFields());
        for (int i = 0; i < h.size(); i++) {
            // Lower case in the protocol's sense: no ASCII upper-case letter (anything else is the validator's).
            assertThat(h.name(i)).as("field name").isNotEmpty().doesNotContainPattern("[A-Z]");
        }
    }

    /**
     * The rejection, if any, against what the protocol says: the rest of the input after the last frame decoded holds
     * no complete frame when there is none; when there is one, the first four bytes of that rest decide the kind
     * whenever they are wrong, and exactly one GOAWAY with the tabled code and the highest REQUEST's id went out.
     */
    private static void checkError(byte[] input, Decoded d) {
        int at = (int) d.bytesIn;
        if (d.error == null) {
            assertThat(d.written).as("frames written without an error").isEmpty();
            assertThat(d.open).isTrue();
            int rest = input.length - at;
            if (rest >= 16) {
                long frame = 16 + u16(input, at + 10) + u32(input, at + 12);
                assertThat((long) rest).as("a complete frame left undecoded at byte %d", at).isLessThan(frame);
            }
            return;
        }
        WmpDecodeError byHead = headError(input, at);
        if (byHead != null) {
            assertThat(d.error).as("the error for the frame at byte %d", at).isEqualTo(byHead);
        } else {
            assertThat(d.error).isNotIn(WmpDecodeError.BAD_MAGIC, WmpDecodeError.UNSUPPORTED_VERSION,
                    WmpDecodeError.UNKNOWN_TYPE);
        }
        assertThat(d.open).as("the connection is closed after a rejection").isFalse();
        assertThat(d.written).as("what the decoder wrote back").hasSize(1);
        WmpGoAway g = (WmpGoAway) d.written.getFirst();
        assertThat(g.error()).isEqualTo(GOAWAY_CODE.get(d.error));
        assertThat(g.lastStreamId()).isEqualTo(d.maxRequestId);
        assertThat(g.debug()).isNotBlank();
    }

    /** The error the first four bytes at {@code at} make certain, or null if they are fine (or not all here). */
    private static WmpDecodeError headError(byte[] b, int at) {
        if (at < b.length && (b[at] & 0xFF) != 0x57) {
            return WmpDecodeError.BAD_MAGIC;
        }
        if (at + 1 < b.length && b[at + 1] != 1) {
            return WmpDecodeError.UNSUPPORTED_VERSION;
        }
        if (at + 2 < b.length && (b[at + 2] < 1 || b[at + 2] > 8)) {
            return WmpDecodeError.UNKNOWN_TYPE;
        }
        if (at + 3 < b.length) {
            int flags = b[at + 3] & 0xFF;
            int type = b[at + 2];
            if ((flags & ~1) != 0 || (flags != 0 && type > 3)) {
                return WmpDecodeError.BAD_FLAGS;
            }
        }
        return null;
    }

    private static long u16(byte[] b, int at) {
        return ((b[at] & 0xFFL) << 8) | (b[at + 1] & 0xFFL);
    }

    private static long u32(byte[] b, int at) {
        return (u16(b, at) << 16) | u16(b, at + 2);
    }

    /** {@code f} through the real encoder and a fresh decoder is {@code f} again. */
    private static void checkRoundTrip(WmpFrame f) {
        WmpFrame copy = switch (f) {
            case WmpRequest r -> new WmpRequest(r.streamId(), r.endStream(), r.method(), r.authority(), r.path(),
                    r.headers(), r.body().retainedDuplicate());
            case WmpResponse r -> new WmpResponse(r.streamId(), r.endStream(), r.status(), r.headers(),
                    r.body().retainedDuplicate());
            case WmpData d -> new WmpData(d.streamId(), d.endStream(), d.body().retainedDuplicate());
            default -> f;
        };
        EmbeddedChannel enc = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
        enc.writeOutbound(copy);
        ByteBuf wire = PooledByteBufAllocator.DEFAULT.directBuffer();
        for (ByteBuf b; (b = enc.readOutbound()) != null; ) {
            wire.writeBytes(b);
            b.release();
        }
        enc.finishAndReleaseAll();
        EmbeddedChannel dec = new EmbeddedChannel(new WmpFrameDecoder(ROOMY, new WmpCodecMetrics()));
        dec.writeInbound(wire);
        WmpFrame back = dec.readInbound();
        try {
            assertThat(back).as("%s re-encoded did not decode", f).isNotNull();
            assertThat((Object) dec.readOutbound()).as("%s re-encoded was rejected", f).isNull();
            if (f instanceof WmpGoAway g && back instanceof WmpGoAway b
                    && g.debug().getBytes(StandardCharsets.UTF_8).length > 256) {
                // Invalid UTF-8 is read as U+FFFD, three bytes for one, and the encoder cuts debug text to 256 bytes.
                assertThat(g.debug()).startsWith(b.debug());
                assertThat(new WmpGoAway(b.lastStreamId(), b.error(), g.debug())).isEqualTo(g);
            } else {
                assertThat(describe(back)).as("%s encoded and decoded again", f).isEqualTo(describe(f));
            }
        } finally {
            if (back != null) {
                back.release();
            }
            dec.finishAndReleaseAll();
        }
    }

    /** What the decoder wrote to the peer (a GOAWAY, if it rejected something), decoded. */
    private static List<WmpFrame> peerReads(EmbeddedChannel ch) {
        ByteBuf wire = PooledByteBufAllocator.DEFAULT.directBuffer();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            wire.writeBytes(b);
            b.release();
        }
        EmbeddedChannel peer = new EmbeddedChannel(new WmpFrameDecoder(WmpLimits.defaults(), new WmpCodecMetrics()));
        peer.writeInbound(wire);
        List<WmpFrame> frames = new ArrayList<>();
        for (WmpFrame f; (f = peer.readInbound()) != null; ) {
            frames.add(f); // a GOAWAY holds no buffer
        }
        assertThat((Object) peer.readOutbound()).as("what the decoder wrote is not WMP").isNull();
        peer.finishAndReleaseAll();
        return frames;
    }

    /** Everything a frame says, bodies as hex: equal descriptions are equal frames. */
    static String describe(WmpFrame f) {
        return switch (f) {
            case WmpRequest r -> "REQUEST " + r.streamId() + (r.endStream() ? " END " : " ") + r.method() + " "
                    + r.authority() + " " + r.path() + " " + r.headers().size() + r.headers() + " " + ByteBufUtil.hexDump(r.body());
            case WmpResponse r -> "RESPONSE " + r.streamId() + (r.endStream() ? " END " : " ") + r.status() + " "
                    + r.headers().size() + r.headers() + " " + ByteBufUtil.hexDump(r.body());
            case WmpData d -> "DATA " + d.streamId() + (d.endStream() ? " END " : " ") + ByteBufUtil.hexDump(d.body());
            default -> f.toString(); // records without a buffer describe themselves
        };
    }
}
