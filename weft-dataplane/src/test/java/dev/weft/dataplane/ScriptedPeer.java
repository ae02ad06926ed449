package dev.weft.dataplane;

import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameDecoder;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpPing;
import dev.weft.protocol.WmpRequest;
import dev.weft.testing.LoopbackServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A peer sidecar that answers as no Weft sidecar would, for tests of the consumer side's WMP boundary: a WMP server on
 * a loopback port the OS picks, which answers each REQUEST with the frames a test's script makes for it (and PINGs
 * with PONGs). Frames are made and read with the production WMP codec in EmbeddedChannels, as
 * {@code WmpBoundarySocketTest}'s peer does. A consumer sidecar finds it through the registry like any provider.
 *
 * <p>Thread: a {@link LoopbackServer}'s, one virtual thread per connection (with its own codec channels); the script
 * runs on the connection's thread, and what was received is safe to read from any thread. Buffers: each frame read is
 * released before it is recorded (tests read its ids, codes and strings); frames the script returns are released by
 * the encoder.
 */
final class ScriptedPeer implements AutoCloseable {
    private final LoopbackServer server;
    private final Function<WmpRequest, List<WmpFrame>> script;
    /** Every frame the consumer side sent, in the order each connection read them. */
    final List<WmpFrame> received = new CopyOnWriteArrayList<>();

    ScriptedPeer(Function<WmpRequest, List<WmpFrame>> script) throws IOException {
        this.script = script;
        server = new LoopbackServer("scripted-peer", this::serve);
    }

    int port() {
        return server.address().getPort();
    }

    /** The CANCELs received, in order. */
    List<WmpCancel> cancels() {
        return received(WmpCancel.class);
    }

    /** The GOAWAYs received, in order. */
    List<WmpGoAway> goAways() {
        return received(WmpGoAway.class);
    }

    private <T extends WmpFrame> List<T> received(Class<T> type) {
        List<T> out = new ArrayList<>();
        for (WmpFrame f : received) {
            if (type.isInstance(f)) {
                out.add(type.cast(f));
            }
        }
        return out;
    }

    private void serve(Socket s) {
        EmbeddedChannel decoder = new EmbeddedChannel(new WmpFrameDecoder(WmpLimits.defaults(), new WmpCodecMetrics()));
        EmbeddedChannel encoder = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) >= 0; ) {
                decoder.writeInbound(Unpooled.copiedBuffer(buf, 0, n));
                for (WmpFrame f; (f = decoder.readInbound()) != null; ) {
                    f.release();
                    received.add(f);
                    List<WmpFrame> answer = switch (f) {
                        case WmpRequest r -> script.apply(r);
                        case WmpPing p when !p.ack() -> List.of(new WmpPing(p.payload(), true));
                        default -> List.of();
                    };
                    for (WmpFrame a : answer) {
                        write(encoder, a, out);
                    }
                }
            }
        } catch (IOException e) {
            // the consumer side closed or reset the connection: what it sent before is recorded
        } finally {
            decoder.finishAndReleaseAll();
            encoder.finishAndReleaseAll();
        }
    }

    private static void write(EmbeddedChannel encoder, WmpFrame frame, OutputStream out) throws IOException {
        encoder.writeOutbound(frame);
        for (ByteBuf b; (b = encoder.readOutbound()) != null; ) {
            try {
                byte[] bytes = new byte[b.readableBytes()];
                b.readBytes(bytes);
                out.write(bytes);
            } finally {
                b.release();
            }
        }
        out.flush();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
