package dev.weft.dataplane.exchange;

import dev.weft.dataplane.downstream.Http1Downstream;
import dev.weft.dataplane.http.Http1Messages;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.protocol.WmpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.util.ReferenceCountUtil;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One client connection into a real {@link Http1Downstream}, in an {@link EmbeddedChannel}: the pipeline a listener
 * builds, minus the HTTP/1.1 decoder, whose messages ({@link RequestHead}, body {@code ByteBuf}s,
 * {@link Http1Messages#END}, {@link Http1Messages.Rejected}) the test writes in directly. What the downstream writes
 * back (bytes from the encoder, or written past it) is decoded by Netty's client-side decoder into {@link Answer}s.
 *
 * <p>Thread: the test's (EmbeddedChannel runs everything on the caller's thread). Buffers: every request body piece
 * made by {@link #piece} (from the pooled allocator, which the leak detector tracks) is kept, so that
 * {@link #assertPiecesReleased()} can check that the downstream, the exchange or the upstream call released each;
 * every byte read back is released here, and each decoded answer is copied into an {@link Answer} and released.
 */
final class Http1Connection {
    final EmbeddedChannel channel;
    private final EmbeddedChannel client = new EmbeddedChannel(new HttpResponseDecoder(), new HttpObjectAggregator(1 << 22));
    private final List<ByteBuf> pieces = new ArrayList<>();

    Http1Connection(PolicyStack stack) {
        channel = new EmbeddedChannel(new Http1Downstream(stack, true));
    }

    /** An answer as the client decoded it: no buffer left to release. */
    record Answer(int status, HttpHeaders headers, String body) {
        String header(String name) {
            return headers.get(name);
        }
    }

    static RequestHead head(String method, String path, String... fields) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < fields.length; i += 2) {
            h.add(fields[i], fields[i + 1]);
        }
        return new RequestHead(method, "provider", path, h);
    }

    ByteBuf piece(String text) {
        ByteBuf b = ByteBufUtil.writeUtf8(PooledByteBufAllocator.DEFAULT, text);
        pieces.add(b);
        return b;
    }

    /** Writes what the decoder would pass up in one read, then the end of that read. */
    void send(Object... messages) {
        channel.writeInbound(messages);
        assertThat((Object) channel.readInbound()).as("the downstream passed a message on").isNull();
    }

    /** A whole request in one read: head, its body (if any) as one piece, END. */
    void request(String method, String path, String body) {
        if (body.isEmpty()) {
            send(head(method, path), Http1Messages.END);
        } else {
            send(head(method, path, "content-length", Integer.toString(body.length())), piece(body), Http1Messages.END);
        }
    }

    /** Every whole answer written back since the last call, in order. */
    List<Answer> answers() {
        Object o;
        while ((o = channel.readOutbound()) != null) {
            if (!(o instanceof ByteBuf b)) {
                ReferenceCountUtil.release(o);
                throw new AssertionError("the downstream wrote " + o.getClass().getName() + " past the encoder");
            }
            client.writeInbound(b);
        }
        List<Answer> out = new ArrayList<>();
        while ((o = client.readInbound()) != null) {
            try {
                FullHttpResponse r = (FullHttpResponse) o;
                assertThat(r.decoderResult().isSuccess()).as("the answer decodes: " + r.decoderResult()).isTrue();
                out.add(new Answer(r.status().code(), new DefaultHttpHeaders().set(r.headers()),
                        r.content().toString(StandardCharsets.UTF_8)));
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
        return out;
    }

    /** The one answer written back since the last call. */
    Answer answer() {
        List<Answer> a = answers();
        assertThat(a).as("answers written back").hasSize(1);
        return a.getFirst();
    }

    /** The bytes written back since the last call, undecoded (for answers that are cut short). */
    String rawOutbound() {
        StringBuilder sb = new StringBuilder();
        Object o;
        while ((o = channel.readOutbound()) != null) {
            try {
                sb.append(((ByteBuf) o).toString(StandardCharsets.ISO_8859_1));
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
        return sb.toString();
    }

    boolean isOpen() {
        return channel.isOpen();
    }

    /** Runs what the loop has due: the pending tasks and the scheduled tasks whose time has come. */
    void runDueTasks() {
        channel.runPendingTasks();
        channel.runScheduledPendingTasks();
    }

    /** Closes both ends and releases whatever was left unread. */
    void finish() {
        channel.finishAndReleaseAll();
        client.finishAndReleaseAll();
    }

    void assertPiecesReleased() {
        for (ByteBuf b : pieces) {
            assertThat(b.refCnt()).as("a request body piece was neither sent upstream nor released").isZero();
        }
    }
}
