package dev.weft.dataplane.http;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.weft.dataplane.fuzz.Mutator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any bytes at all, in reads of any size, through both decoders: no exception escapes, what comes out is always
 * head, body pieces, END (or one Rejected, and then nothing), every buffer is released (the leak check fails the
 * class otherwise), and every head decoded is one the writer accepts.
 *
 * <p>A plain {@code mvn test} runs only the seed corpus (Jazzer's regression mode: src/test/resources/.../
 * Http1FuzzTestInputs) and {@link #seededMutationsOfTheCorpusKeepEveryRule}, a fixed-seed mutation of the same seeds,
 * in a few seconds. To fuzz: {@code JAZZER_FUZZ=1 mvn -pl weft-dataplane -am test -Dtest=Http1FuzzTest#<target>
 * -Dsurefire.failIfNoSpecifiedTests=false} (docs/operations.md, "Fuzzing"); each finding is written next to the seeds
 * and then runs in every build (Jazzer also keeps its working corpus in weft-dataplane/.cifuzz-corpus, which is not
 * to be committed). Jazzer 0.30 instruments these Java 25 classes, so the fuzzing is guided by coverage (0.24's ASM
 * could not read them, and fuzzed blind).
 */
class Http1FuzzTest {
    private static final String REQUESTS = "theRequestDecoderEmitsWellFormedSequencesForAnyBytes";
    private static final String RESPONSES = "theResponseDecoderEmitsWellFormedSequencesForAnyBytes";

    /** Jazzer instruments only these decoders (see {@link Mutator#instrumentOnly}). */
    @BeforeAll
    static void instrumentOnlyTheDecoders() {
        Mutator.instrumentOnly("dev.weft.dataplane.http.**");
    }

    @FuzzTest(maxDuration = "4m")
    void theRequestDecoderEmitsWellFormedSequencesForAnyBytes(byte[] input) {
        run(new EmbeddedChannel(new Http1RequestDecoder()), input, true);
    }

    @FuzzTest(maxDuration = "4m")
    void theResponseDecoderEmitsWellFormedSequencesForAnyBytes(byte[] input) {
        Http1ResponseDecoder d = new Http1ResponseDecoder();
        // The last byte says which of eight requests are HEADs; it stays part of the input too.
        int heads = input.length == 0 ? 0 : input[input.length - 1];
        for (int i = 0; i < 8; i++) {
            d.expectHeadAnswer((heads & (1 << i)) != 0);
        }
        run(new EmbeddedChannel(d), input, false);
    }

    /**
     * Each seed, mutated a few thousand times with a fixed seed (so a failure reproduces; the message names the
     * input): bytes flipped, replaced with the bytes HTTP/1.1 framing turns on, inserted, deleted, duplicated.
     */
    @Test
    void seededMutationsOfTheCorpusKeepEveryRule() {
        Mutator m = new Mutator(20261201, "\r\n :;,\t0fF\"\u0000\u007f\u0080".getBytes(StandardCharsets.ISO_8859_1));
        m.mutateEach(Mutator.corpus(Http1FuzzTest.class, REQUESTS), 400,
                this::theRequestDecoderEmitsWellFormedSequencesForAnyBytes);
        m.mutateEach(Mutator.corpus(Http1FuzzTest.class, RESPONSES), 400,
                this::theResponseDecoderEmitsWellFormedSequencesForAnyBytes);
    }

    /** Feeds {@code input} in reads whose size the first byte sets, then closes; checks each thing emitted. */
    private static void run(EmbeddedChannel ch, byte[] input, boolean requests) {
        int read = input.length == 0 ? 1 : Math.max(1, input[0] & 0xFF);
        Sequence seq = new Sequence(requests);
        for (int off = 0; off < input.length; off += read) {
            int n = Math.min(read, input.length - off);
            ch.writeInbound(ByteBufAllocator.DEFAULT.directBuffer(n).writeBytes(input, off, n)); // rethrows
            seq.readAll(ch);
        }
        ch.finish();
        seq.readAll(ch);
    }

    /** What may follow what: (head (body)* END)* then at most one Rejected, then nothing. */
    private static final class Sequence {
        private final boolean requests;
        private boolean inBody;
        private boolean rejected;

        Sequence(boolean requests) {
            this.requests = requests;
        }

        void readAll(EmbeddedChannel ch) {
            for (Object m; (m = ch.readInbound()) != null; ) {
                try {
                    accept(m);
                } finally {
                    if (m instanceof ByteBuf b) {
                        b.release();
                    }
                }
            }
        }

        private void accept(Object m) {
            assertThat(rejected).as("%s emitted after a Rejected", m).isFalse();
            if (m instanceof Http1Messages.Rejected r) {
                rejected = true;
                assertThat(r.message()).isNotBlank();
                assertThat(r.status()).isBetween(400, 599);
            } else if (m == Http1Messages.END) {
                assertThat(inBody).as("END without a head").isTrue();
                inBody = false;
            } else if (m instanceof ByteBuf b) {
                assertThat(inBody).as("a body piece without a head").isTrue();
                assertThat(b.readableBytes()).isBetween(1, HttpLimits.MAX_CHUNK_BYTES);
            } else {
                assertThat(inBody).as("a head before the previous message's END").isFalse();
                inBody = true;
                ByteBuf written;
                if (requests) {
                    RequestHead h = (RequestHead) m;
                    written = Http1Writer.requestHead(ByteBufAllocator.DEFAULT, h, h.authority(), h.fields());
                } else {
                    written = Http1Writer.responseHead(ByteBufAllocator.DEFAULT, (ResponseHead) m);
                }
                written.release();
            }
        }
    }
}
