package dev.weft.dataplane;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The JVM a sidecar runs in: the options of {@code sidecar-jvm.options} (heap, collector, code cache...; why each,
 * in docs/operations.md) and the AOT cache {@code ./weft} trains after each build. {@code ./weft sidecar} reads the
 * same file and {@code ./weft bench} uses this class, so the sidecars the bench measures run the JVM users run.
 *
 * <p>The options come after the flags every Weft JVM needs (Netty's native access and Unsafe, the serial collector).
 */
public final class SidecarJvm {
    /** Where {@code ./weft} says the AOT cache is, when it has one that matches this build, this JDK and these options. */
    public static final String AOT_CACHE_ENV = "WEFT_SIDECAR_AOT_CACHE";
    private static final String RESOURCE = "sidecar-jvm.options";

    private SidecarJvm() {
    }

    /** The tuned options, one per element (the file's lines without comments, split on blanks). */
    public static List<String> options() {
        try (InputStream in = SidecarJvm.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path next to "
                        + SidecarJvm.class.getName());
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
    }

    /** Options as sidecar-jvm.options writes them (whitespace-separated, {@code #} comments), also for a flag's value. */
    public static List<String> parse(String text) {
        List<String> options = new ArrayList<>();
        for (String line : text.split("\\R")) {
            int hash = line.indexOf('#');
            String content = (hash >= 0 ? line.substring(0, hash) : line).strip();
            for (String option : content.split("\\s+")) {
                if (!option.isEmpty()) {
                    options.add(option);
                }
            }
        }
        return List.copyOf(options);
    }

    /**
     * The AOT cache to add ({@code -XX:AOTCache=...}) to sidecars started with {@code jvmOptions}: present only when
     * {@code ./weft} exported one (it does so only for a cache trained on this build, this JDK and {@link #options()})
     * and the options are those it was trained with, give or take the heap's sizes and Netty's system properties.
     * Any other difference could make the JVM reject the cache, with an error line at every start.
     */
    public static Optional<Path> aotCache(List<String> jvmOptions) {
        return aotCache(System.getenv(AOT_CACHE_ENV), jvmOptions, options());
    }

    static Optional<Path> aotCache(String cache, List<String> jvmOptions, List<String> trainedWith) {
        if (cache == null || cache.isBlank() || !cacheKey(jvmOptions).equals(cacheKey(trainedWith))) {
            return Optional.empty();
        }
        Path path = Path.of(cache);
        return Files.isRegularFile(path) ? Optional.of(path) : Optional.empty();
    }

    /**
     * The options that decide whether a cache fits: without the heap's sizes ({@code -Xms}, {@code -Xmx},
     * {@code -Xmn}) and Netty's system properties ({@code -Dio.netty.}). JDK 25 maps an AOT cache trained with one
     * heap size into a JVM started with another, and never checks system properties (Netty reads its own when its
     * classes initialise, at run time); the collector, compact headers and the like must match (SidecarJvmTest starts
     * each kind). So the bench can compare young generations, or Netty's allocator settings, on the cache users run.
     */
    static List<String> cacheKey(List<String> jvmOptions) {
        return jvmOptions.stream()
                .filter(o -> !(o.startsWith("-Xms") || o.startsWith("-Xmx") || o.startsWith("-Xmn")
                        || o.startsWith("-Dio.netty.")))
                .toList();
    }
}
