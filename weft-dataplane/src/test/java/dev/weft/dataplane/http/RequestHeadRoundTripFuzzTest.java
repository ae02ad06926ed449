package dev.weft.dataplane.http;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.weft.dataplane.fuzz.Mutator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request head codec round trip, for any bytes: every head {@link Http1RequestDecoder} makes of them, written by
 * {@link Http1Writer} (as the sidecar writes a request to the app or a peer) and decoded again, is the same head
 * (method, target, Host, every field in order); and written and decoded once more, it is the same in every respect
 * (keep-alive and 100-continue too: the first pass may have read HTTP/1.0, the writer writes HTTP/1.1). A head that
 * came out otherwise would mean the writer and the decoder read a request two ways, the root of request smuggling.
 *
 * <p>Fuzzing: {@code JAZZER_FUZZ=1 mvn -pl weft-dataplane -am test -Dtest=RequestHeadRoundTripFuzzTest#<target>
 * -Dsurefire.failIfNoSpecifiedTests=false} (docs/operations.md, "Fuzzing"). A plain build replays the corpus
 * (the HTTP/1.1 request seeds of {@link Http1FuzzTest} and findings) and
 * {@link #seededMutationsOfTheCorpusKeepTheRoundTrip}.
 *
 * <p>Thread: the test's, which is each EmbeddedChannel's loop. Buffers: heads written are decoded and released
 * here; body pieces decoded are released as they are read; the input buffer is checked to be released.
 */
class RequestHeadRoundTripFuzzTest {
    private static final String TARGET = "aDecodedHeadWrittenAndDecodedAgainIsTheSameHead";

    /** Jazzer instruments only the HTTP/1.1 codec (see {@link Mutator#instrumentOnly}). */
    @BeforeAll
    static void instrumentOnlyTheCodec() {
        Mutator.instrumentOnly("dev.weft.dataplane.http.**");
    }

    @FuzzTest(maxDuration = "4m")
    void aDecodedHeadWrittenAndDecodedAgainIsTheSameHead(byte[] input) {
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(1, input.length)).writeBytes(input);
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder(Duration.ZERO));
        ch.writeInbound(in.retain());
        ch.finish();
        for (Object m; (m = ch.readInbound()) != null; ) {
            try {
                if (m instanceof RequestHead h) {
                    roundTrip(h);
                }
            } finally {
                ReferenceCountUtil.release(m);
            }
        }
        assertThat(in.release()).as("the input is still held after the decoder is gone").isTrue();
    }

    @Test
    void seededMutationsOfTheCorpusKeepTheRoundTrip() {
        Mutator m = new Mutator(20261203, "\r\n :;,\t0fF\"\u0000\u007f\u0080Hh/*".getBytes(StandardCharsets.ISO_8859_1));
        m.mutateEach(Mutator.corpus(RequestHeadRoundTripFuzzTest.class, TARGET), 200,
                this::aDecodedHeadWrittenAndDecodedAgainIsTheSameHead);
    }

    private static void roundTrip(RequestHead first) {
        if (first.authority() == null) {
            // HTTP/1.0 without Host: written as HTTP/1.1, which must name one, it is not the same request. Writing
            // it must still work, and a relay gives it the Host of its route.
            ReferenceCountUtil.release(Http1Writer.requestHead(PooledByteBufAllocator.DEFAULT, first, null, first.fields()));
            return;
        }
        RequestHead second = writtenAndDecoded(first);
        assertThat(second.method()).isEqualTo(first.method());
        assertThat(second.path()).isEqualTo(first.path());
        assertThat(second.authority()).isEqualTo(first.authority());
        assertThat(second.fields()).as("fields of %s", first).isEqualTo(first.fields());
        RequestHead third = writtenAndDecoded(second);
        assertThat(third.toString()).isEqualTo(second.toString());
        assertThat(third.fields()).isEqualTo(second.fields());
        assertThat(third.keepAlive()).as("keep-alive of %s", second).isEqualTo(second.keepAlive());
        assertThat(third.expectContinue()).as("100-continue of %s", second).isEqualTo(second.expectContinue());
    }

    /** {@code h} written by the writer and read by a fresh decoder: the first thing read must be a head. */
    private static RequestHead writtenAndDecoded(RequestHead h) {
        ByteBuf wire = Http1Writer.requestHead(PooledByteBufAllocator.DEFAULT, h, h.authority(), h.fields());
        String text = wire.toString(StandardCharsets.ISO_8859_1);
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder(Duration.ZERO));
        ch.writeInbound(wire);
        Object read = ch.readInbound();
        try {
            assertThat(read).as("%s written as %s and decoded again", h, text).isInstanceOf(RequestHead.class);
            return (RequestHead) read;
        } finally {
            for (Object m; (m = ch.readInbound()) != null; ) {
                ReferenceCountUtil.release(m);
            }
            ch.finishAndReleaseAll();
        }
    }
}
