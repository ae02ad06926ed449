package dev.weft.testing;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * What the fuzz tests share for a plain build, where Jazzer only replays the seed corpus: the corpus itself, and a
 * fixed-seed mutation of it, so that every build still tries some thousands of broken inputs and a failure names the
 * input that broke (hex) and reproduces.
 *
 * <p>The corpus of a Jazzer target {@code m} in class {@code C} is the files in the test resources directory
 * {@code <C's package>/CInputs/m/}: Jazzer replays them in regression mode and writes each new finding there.
 * Shared by every module's fuzz tests (the data plane's and the control plane's).
 */
public class Mutator {
    private final Random random;
    /** Bytes the input's grammar turns on; mutations favour them over random bytes. */
    private final byte[] special;

    public Mutator(long seed, byte[] special) {
        this.random = new Random(seed);
        this.special = special.clone();
    }

    public Random random() {
        return random;
    }

    /** Runs {@code target} on {@code rounds} mutations of each seed; a failure names the input in hex. */
    public void mutateEach(List<byte[]> seeds, int rounds, Consumer<byte[]> target) {
        for (byte[] seed : seeds) {
            for (int round = 0; round < rounds; round++) {
                byte[] input = mutate(seed);
                try {
                    target.accept(input);
                } catch (RuntimeException | AssertionError e) {
                    throw new AssertionError("broke on input " + HexFormat.of().formatHex(input), e);
                }
            }
        }
    }

    /** One to four edits: a byte replaced (at random or by a special byte), a special byte inserted, a run deleted or duplicated. */
    public byte[] mutate(byte[] seed) {
        byte[] b = seed.clone();
        for (int edits = 1 + random.nextInt(4); edits > 0 && b.length > 0; edits--) {
            int at = random.nextInt(b.length);
            switch (random.nextInt(5)) {
                case 0 -> b[at] = (byte) random.nextInt(256);
                case 1 -> b[at] = special[random.nextInt(special.length)];
                case 2 -> { // insert a special byte
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
                default -> { // duplicate a run (a repeated field, a longer chunk, a frame twice)
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

    /**
     * Tells Jazzer, which reads it when it installs its agent (after a test class's {@code @BeforeAll}), to instrument
     * for coverage, and hook, only the classes {@code globs} name ({@code a.b.**:c.**}), rather than retransform
     * every loaded class. {@code jazzer.hooks} stays on: turned off, Jazzer 0.30 instruments nothing at all (no
     * class is reported instrumented, and libFuzzer finds no coverage), so it fuzzes blind.
     */
    public static void instrumentOnly(String globs) {
        System.setProperty("jazzer.instrumentation_includes", globs);
        System.setProperty("jazzer.custom_hook_includes", globs);
    }

    /** The seed corpus of Jazzer target {@code method} of {@code test}, in file name order; never empty. */
    public static List<byte[]> corpus(Class<?> test, String method) {
        String dir = test.getSimpleName() + "Inputs/" + method;
        URL url = test.getResource(dir);
        if (url == null) {
            throw new IllegalStateException("no seed corpus " + dir + " beside " + test.getName());
        }
        try (Stream<Path> files = Files.list(Path.of(URI.create(url.toString())))) {
            List<byte[]> seeds = new ArrayList<>();
            for (Path f : files.sorted().toList()) {
                seeds.add(Files.readAllBytes(f));
            }
            if (seeds.isEmpty()) {
                throw new IllegalStateException("the seed corpus " + dir + " is empty");
            }
            return seeds;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the seed corpus " + dir, e);
        }
    }
}
