package dev.weft.dataplane.http;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any bytes at all, in reads of any size, through both decoders: no exception escapes, what comes out is always
 * head, body pieces, END (or one Rejected, and then nothing), every buffer is released (the leak check fails the
 * class otherwise), and every head decoded is one the writer accepts.
 *
 * <p>A plain {@code mvn test} runs only the seed corpus (Jazzer's regression mode: src/test/resources/.../
 * Http1FuzzTestInputs) and {@link #seededMutationsOfTheCorpusKeepEveryRule}, a fixed-seed mutation of the same seeds,
 * in a few seconds. To fuzz: {@code JAZZER_FUZZ=1 mvn -pl weft-dataplane test -Dtest=Http1FuzzTest}; each
 * finding is written next to the seeds and then runs in every build (Jazzer also keeps its working corpus in
 * weft-dataplane/.cifuzz-corpus, which is not to be committed). But Jazzer 0.24's ASM cannot read Java 25
 * class files (major version 69): it cannot instrument these classes for coverage, so its fuzzing is blind
 * (random mutation, no feedback) until a Jazzer release with a newer ASM. The seeded mutations are there so that a
 * plain build still tries some five thousand broken inputs.
 */
class Http1FuzzTest {
    private static final String SEEDS = "Http1FuzzTestInputs/";
    private static final String REQUESTS = "theRequestDecoderEmitsWellFormedSequencesForAnyBytes";
    private static final String RESPONSES = "theResponseDecoderEmitsWellFormedSequencesForAnyBytes";

    /**
     * Read by Jazzer when it installs its agent, after this runs. Its sanitizer hooks guard against injection into
     * JNDI, SQL, shells and the like, none of which a parser reaches; left on, they made Jazzer retransform every
     * loaded class (16 s a run instead of 2). Instrumenting only these decoders is what fuzzing wants anyway.
     */
    @BeforeAll
    static void instrumentOnlyTheDecoders() {
        System.setProperty("jazzer.hooks", "false");
        System.setProperty("jazzer.instrumentation_includes", "dev.weft.dataplane.http.**");
        System.setProperty("jazzer.custom_hook_includes", "dev.weft.dataplane.http.**");
    }

    @FuzzTest(maxDuration = "5m")
    void theRequestDecoderEmitsWellFormedSequencesForAnyBytes(byte[] input) {
        run(new EmbeddedChannel(new Http1RequestDecoder()), input, true);
    }

    @FuzzTest(maxDuration = "5m")
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
    void seededMutationsOfTheCorpusKeepEveryRule() throws IOException {
        Random random = new Random(20261201);
        byte[] special = "\r\n :;,\t0fF\"\u0000\u007f\u0080".getBytes(StandardCharsets.ISO_8859_1);
        for (String dir : List.of(REQUESTS, RESPONSES)) {
            for (byte[] seed : seeds(dir)) {
                for (int round = 0; round < 400; round++) {
                    byte[] input = mutate(seed, random, special);
                    try {
                        if (dir.equals(REQUESTS)) {
                            theRequestDecoderEmitsWellFormedSequencesForAnyBytes(input);
                        } else {
                            theResponseDecoderEmitsWellFormedSequencesForAnyBytes(input);
                        }
                    } catch (RuntimeException | AssertionError e) {
                        throw new AssertionError(dir + " broke on " + java.util.HexFormat.of().formatHex(input), e);
                    }
                }
            }
        }
    }

    private static byte[] mutate(byte[] seed, Random random, byte[] special) {
        byte[] b = seed.clone();
        for (int edits = 1 + random.nextInt(4); edits > 0 && b.length > 0; edits--) {
            int at = random.nextInt(b.length);
            switch (random.nextInt(5)) {
                case 0 -> b[at] = (byte) random.nextInt(256);
                case 1 -> b[at] = special[random.nextInt(special.length)];
                case 2 -> { // insert a framing byte
                    byte[] g = new byte[b.length + 1];
                    System.arraycopy(b, 0, g, 0, at);
                    g[at] = special[random.nextInt(special.length)];
                    System.arraycopy(b, at, g, at + 1, b.length - at);
                    b = g;
                }
                case 3 -> { // delete a run
                    int n = Math.min(1 + random.nextInt(8), b.length - at);
                    byte[] g = new byte[b.length - n];
                    System.arraycopy(b, 0, g, 0, at);
                    System.arraycopy(b, at + n, g, at, b.length - at - n);
                    b = g;
                }
                default -> { // duplicate a run (a repeated header, a longer chunk)
                    int n = Math.min(1 + random.nextInt(40), b.length - at);
                    byte[] g = new byte[b.length + n];
                    System.arraycopy(b, 0, g, 0, at + n);
                    System.arraycopy(b, at, g, at + n, b.length - at);
                    b = g;
                }
            }
        }
        return b;
    }

    private static List<byte[]> seeds(String dir) throws IOException {
        URL url = Http1FuzzTest.class.getResource(SEEDS + dir);
        assertThat(url).as("seed corpus " + dir).isNotNull();
        try (Stream<Path> files = Files.list(Path.of(URI.create(url.toString())))) {
            List<byte[]> seeds = new ArrayList<>();
            for (Path f : files.sorted().toList()) {
                seeds.add(Files.readAllBytes(f));
            }
            assertThat(seeds).isNotEmpty();
            return seeds;
        }
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
