package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Frames, encoding and decoding through real pipelines, for the codec tests. Every helper says who releases what. */
final class WmpTestSupport {
    /** Pooled buffers are the ones Netty's leak detector tracks; unpooled heap buffers would hide a leak. */
    static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    static final String UNICODE_PATH = "/dokumente/über/日本語/😀?q=ä&r=%20";

    private WmpTestSupport() {}

    /**
     * One fresh frame of every shape the codec must carry. Fresh on every call because writing a frame hands its
     * body to the pipeline: callers pass each frame to at most one owner.
     */
    static List<WmpFrame> sampleFrames() {
        List<WmpFrame> frames = new ArrayList<>();
        frames.add(new WmpRequest(1, true, "GET", "provider", "/users/42?expand=orders",
                new WmpHeaders().add("accept", "*/*").add("user-agent", "curl/8.5.0")
                        .add("x-request-id", "7f3c9a1e-4b2d-4c55-9a0e-2f6b1d8c3e77"),
                Unpooled.EMPTY_BUFFER));
        frames.add(new WmpRequest(3, false, "POST", "provider", "/",
                new WmpHeaders().add("content-type", "application/x-www-form-urlencoded")
                        .add("x-forwarded-for", "127.0.0.1").add("via", "1.1 weft").add("x-tenant", "acme"),
                bytes("name=weft&mesh=yes!!")));
        frames.add(new WmpRequest(5, true, "PROPFIND", "dav.internal:8443", UNICODE_PATH,
                new WmpHeaders().add("depth", "1").add("x-note", "grüße, 世界"), bytes("<propfind/>")));
        frames.add(new WmpRequest(7, true, "DELETE", "", "/", new WmpHeaders(), Unpooled.EMPTY_BUFFER));
        frames.add(new WmpRequest(9, true, "PUT", "storage", "/blob",
                // Strings over 127 bytes need two-byte lengths.
                new WmpHeaders().add("cookie", "a".repeat(150)).add("x-empty", "").add("accept-encoding", "gzip")
                        .add("cache-control", "no-cache").add("authorization", "Bearer " + "t".repeat(200)),
                bytes("x".repeat(300))));
        frames.add(new WmpResponse(1, true, 200, new WmpHeaders().add("content-type", "text/plain"),
                bytes("hello mesh")));
        frames.add(new WmpResponse(3, false, 404, new WmpHeaders(), Unpooled.EMPTY_BUFFER));
        frames.add(new WmpResponse(5, true, 999, new WmpHeaders().add("server", "weft").add("set-cookie", "id=1")
                .add("set-cookie", "id=2"), bytes("{}")));
        frames.add(new WmpData(3, false, bytes("chunk one")));
        frames.add(new WmpData(3, true, Unpooled.EMPTY_BUFFER));
        frames.add(new WmpPing(0x0102030405060708L, false));
        frames.add(new WmpPing(-1L, true));
        frames.add(new WmpCancel(9, WmpError.TIMEOUT));
        frames.add(new WmpCancel(Integer.MAX_VALUE, WmpError.CANCELLED));
        frames.add(new WmpGoAway(41, WmpError.NO_ERROR, "draining: sidecar restart"));
        frames.add(new WmpGoAway(0, WmpError.PROTOCOL_ERROR, ""));
        frames.add(new WmpGoAway(Integer.MAX_VALUE, WmpError.INTERNAL_ERROR, "überlastet"));
        frames.add(new WmpWindowUpdate(0, 65_536));
        frames.add(new WmpWindowUpdate(7, Integer.MAX_VALUE));
        return frames;
    }

    static ByteBuf bytes(String text) {
        ByteBuf b = ALLOC.buffer();
        b.writeCharSequence(text, StandardCharsets.UTF_8);
        return b;
    }

    /** Encodes through a real {@link WmpFrameEncoder} and returns the wire bytes (caller releases them). */
    static ByteBuf encode(WmpCodecMetrics metrics, List<? extends WmpFrame> frames) {
        EmbeddedChannel channel = new EmbeddedChannel(new WmpFrameEncoder(metrics));
        for (WmpFrame frame : frames) {
            channel.writeOutbound(frame);
        }
        ByteBuf wire = ALLOC.buffer();
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            wire.writeBytes(b);
            b.release();
        }
        channel.finishAndReleaseAll();
        return wire;
    }

    static ByteBuf encode(WmpFrame frame) {
        return encode(new WmpCodecMetrics(), List.of(frame));
    }

    static void releaseAll(List<? extends WmpFrame> frames) {
        frames.forEach(WmpFrame::release);
    }

    /** A decoder on an embedded channel. Close it to release whatever frames a test did not take. */
    static final class Decoding implements AutoCloseable {
        final WmpCodecMetrics metrics = new WmpCodecMetrics();
        final EmbeddedChannel channel;

        Decoding() {
            this(WmpLimits.defaults());
        }

        Decoding(WmpLimits limits) {
            channel = new EmbeddedChannel(new WmpFrameDecoder(limits, metrics));
        }

        /** Delivers {@code chunk} as one read; the pipeline takes ownership of it. */
        Decoding feed(ByteBuf chunk) {
            channel.writeInbound(chunk);
            return this;
        }

        /** Frames decoded so far; the caller owns (and releases) them. */
        List<WmpFrame> frames() {
            List<WmpFrame> frames = new ArrayList<>();
            for (WmpFrame f; (f = channel.readInbound()) != null; ) {
                frames.add(f);
            }
            return frames;
        }

        /** The bytes the decoder wrote back to the peer, decoded (a GOAWAY, if it rejected something). */
        List<WmpFrame> written() {
            ByteBuf wire = ALLOC.buffer();
            for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
                wire.writeBytes(b);
                b.release();
            }
            try (Decoding peer = new Decoding()) {
                return peer.feed(wire).frames();
            }
        }

        @Override
        public void close() {
            releaseAll(frames());
            channel.finishAndReleaseAll();
            releaseAll(frames());
        }
    }
}
