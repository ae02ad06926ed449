package dev.weft.dataplane;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
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
    void noAotCacheForOptionsOtherThanTheTrainedOnes() {
        assertThat(SidecarJvm.aotCache(List.of("-Xmx1g"))).isEmpty();
    }
}
