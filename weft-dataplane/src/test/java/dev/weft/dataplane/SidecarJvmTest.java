package dev.weft.dataplane;

import org.junit.jupiter.api.Test;

import java.util.List;

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

    @Test
    void noAotCacheForOptionsOtherThanTheTrainedOnes() {
        assertThat(SidecarJvm.aotCache(List.of("-Xmx1g"))).isEmpty();
    }
}
