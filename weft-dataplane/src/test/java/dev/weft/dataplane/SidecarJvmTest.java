package dev.weft.dataplane;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class SidecarJvmTest {

    @Test
    void optionsAreTheFilesLinesWithoutCommentsSplitOnBlanks() {
        assertThat(SidecarJvm.parse("""
                # a comment line
                -Xmx32m -Xmn8m   # why
                \t-Xss256k
                
                """)).containsExactly("-Xmx32m", "-Xmn8m", "-Xss256k");
    }

    @Test
    void theShippedOptionsBoundTheHeapAndCanTrainAnAotCache() {
        List<String> options = SidecarJvm.options();
        assertThat(options).anyMatch(o -> o.startsWith("-Xmx"));
        // -XX:AOTCacheOutput refuses to start together with any -Xshare option.
        assertThat(options).noneMatch(o -> o.startsWith("-Xshare"));
        assertThat(options).noneMatch(o -> o.startsWith("-XX:AOTCache"));
    }

    /**
     * Every sidecar starts with these options, so one this JDK does not know (a typo, a flag removed from JDK 25)
     * would stop them all: the JVM refuses to start on an unrecognized -XX option.
     */
    @Test
    void theShippedOptionsStartThisJdk() throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(SidecarJvm.options());
        command.add("-version");
        Process java = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(java.waitFor(60, TimeUnit.SECONDS)).as("java -version ends").isTrue();
        String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(java.exitValue()).as(output).isZero();
        assertThat(output).doesNotContain("Unrecognized").doesNotContain("warning");
    }

    @Test
    void noAotCacheForOptionsOtherThanTheTrainedOnes() throws Exception {
        Path cache = Files.createTempFile("weft-sidecar", ".aot");
        try {
            List<String> trained = List.of("-Xms24m", "-Xmx48m", "-Xmn8m", "-XX:+UseCompactObjectHeaders");
            assertThat(SidecarJvm.aotCache(cache.toString(), trained, trained)).contains(cache);
            assertThat(SidecarJvm.aotCache(cache.toString(),
                    List.of("-Xms32m", "-Xmn16m", "-XX:+UseCompactObjectHeaders", "-Xmx64m"), trained)).contains(cache);
            assertThat(SidecarJvm.aotCache(cache.toString(), List.of("-Xms24m", "-Xmx48m", "-Xmn8m",
                    "-XX:+UseCompactObjectHeaders", "-Dio.netty.allocator.lowMemory=false"), trained)).contains(cache);
            assertThat(SidecarJvm.aotCache(cache.toString(), List.of("-Xmx1g"), trained)).isEmpty();
            assertThat(SidecarJvm.aotCache(cache.toString(),
                    List.of("-Xms24m", "-Xmx48m", "-Xmn8m", "-XX:-UseCompactObjectHeaders"), trained)).isEmpty();
            assertThat(SidecarJvm.aotCache(null, trained, trained)).isEmpty();
            assertThat(SidecarJvm.aotCache(cache + ".missing", trained, trained)).isEmpty();
        } finally {
            Files.deleteIfExists(cache);
        }
    }

    /**
     * What {@link SidecarJvm#aotCache} relies on, asked of this JDK: a cache trained with one heap size maps into a
     * JVM with other heap sizes or other system properties ({@code -XX:AOTMode=on} makes a JVM that cannot use its
     * cache fail), and not into one whose other options differ.
     */
    @Test
    void thisJdkMapsAnAotCacheIntoOtherHeapSizesOnly(@TempDir Path dir) throws Exception {
        String cache = dir.resolve("version.aot").toString();
        assertThat(java("-Xms24m", "-Xmx48m", "-Xmn8m", "-XX:AOTCacheOutput=" + cache, "-version").exitValue)
                .isZero();
        Run otherHeap = java("-Xms32m", "-Xmx64m", "-Xmn16m", "-XX:AOTCache=" + cache, "-XX:AOTMode=on", "-version");
        assertThat(otherHeap.exitValue).as(otherHeap.output).isZero();
        Run otherProperty = java("-Xms24m", "-Xmx48m", "-Xmn8m", "-Dio.netty.allocator.lowMemory=false",
                "-XX:AOTCache=" + cache, "-XX:AOTMode=on", "-version");
        assertThat(otherProperty.exitValue).as(otherProperty.output).isZero();
        Run otherOption = java("-Xms24m", "-Xmx48m", "-Xmn8m", "-XX:+UseCompactObjectHeaders",
                "-XX:AOTCache=" + cache, "-XX:AOTMode=on", "-version");
        assertThat(otherOption.exitValue).as(otherOption.output).isNotZero();
    }

    private record Run(int exitValue, String output) {
    }

    private static Run java(String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC"));
        command.addAll(List.of(options));
        Process java = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(java.waitFor(60, TimeUnit.SECONDS)).as("java ends").isTrue();
        return new Run(java.exitValue(), output);
    }
}
