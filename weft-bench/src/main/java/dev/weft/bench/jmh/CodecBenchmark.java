package dev.weft.bench.jmh;

import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameDecoder;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The WMP codec on the frames of the paper's request: a REQUEST carrying a 48-byte body with the headers a
 * consumer sidecar forwards, and its RESPONSE. Encoding writes the head and header block (the body is passed through
 * untouched, so it is not part of the cost); decoding parses a whole frame from one read buffer and cuts the body
 * out as a slice. Run with {@code -prof gc} for bytes allocated per operation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Dio.netty.noUnsafe=false", "-Dio.netty.leakDetection.level=disabled"})
public class CodecBenchmark {
    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final ByteBuf body = Unpooled.unreleasableBuffer(Unpooled.directBuffer(48)
            .writeBytes("4Xz0b9QkTq1mWcR7vLs2NpYe8HfJ3gUaDi6oKlBxCnE5tMwV".getBytes(StandardCharsets.US_ASCII)));
    private WmpRequest request;
    private WmpResponse response;
    private ByteBuf encodedRequest;
    private ByteBuf encodedResponse;
    private EmbeddedChannel decoder;

    @Setup(Level.Trial)
    public void setUp() {
        WmpHeaders requestHeaders = new WmpHeaders(5)
                .add("content-type", "application/x-www-form-urlencoded")
                .add("content-length", "48")
                .add("user-agent", "weft-bench")
                .add("x-forwarded-for", "127.0.0.1")
                .add("via", "1.1 weft");
        request = new WmpRequest(7, true, "POST", "provider", "/", requestHeaders, body);
        WmpHeaders responseHeaders = new WmpHeaders(3)
                .add("content-type", "text/plain; charset=utf-8")
                .add("content-length", "11")
                .add("x-provider", "large");
        response = new WmpResponse(7, true, 200, responseHeaders, body);
        encodedRequest = wire(request);
        encodedResponse = wire(response);
        decoder = new EmbeddedChannel(new WmpFrameDecoder(WmpLimits.defaults(), new WmpCodecMetrics()));
    }

    private ByteBuf wire(WmpFrame frame) {
        ByteBuf head = WmpFrameEncoder.encodeHead(alloc, frame);
        ByteBuf all = Unpooled.directBuffer().writeBytes(head).writeBytes(body, body.readerIndex(), body.readableBytes());
        head.release();
        return all;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        decoder.finishAndReleaseAll();
        encodedRequest.release();
        encodedResponse.release();
    }

    @Benchmark
    public int encodeRequestHead() {
        ByteBuf head = WmpFrameEncoder.encodeHead(alloc, request);
        int n = head.readableBytes();
        head.release();
        return n;
    }

    @Benchmark
    public int encodeResponseHead() {
        ByteBuf head = WmpFrameEncoder.encodeHead(alloc, response);
        int n = head.readableBytes();
        head.release();
        return n;
    }

    @Benchmark
    public int decodeRequest() {
        return decode(encodedRequest);
    }

    @Benchmark
    public int decodeResponse() {
        return decode(encodedResponse);
    }

    private int decode(ByteBuf wire) {
        decoder.writeInbound(wire.retainedDuplicate());
        WmpFrame frame = decoder.readInbound();
        int id = frame.streamId();
        frame.release();
        return id;
    }
}
