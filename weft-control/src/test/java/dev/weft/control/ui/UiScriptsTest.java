package dev.weft.control.ui;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard's pure JavaScript (trace tree, critical path, span steps, call depths) under Node's own test runner
 * (src/test/js/ui.test.mjs, no package needed). The pages themselves run in Chromium in weft-cli's DashboardTest.
 */
class UiScriptsTest {

    @Test
    void theDashboardsTraceAndMapFunctionsPassTheirNodeTests() throws Exception {
        Path tests = Path.of("src/test/js/ui.test.mjs").toAbsolutePath();
        Path log = Files.createTempFile("weft-ui-node-test", ".log");
        try {
            // node and npm are on every machine of this project (TOOLCHAIN.md); .ci/run installs them if not.
            Process node = new ProcessBuilder("node", "--test", tests.toString()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            boolean finished = node.waitFor(60, TimeUnit.SECONDS);
            if (!finished) {
                node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String out = Files.readString(log);
            assertThat(finished).as("node --test still running after 60 s:\n" + out).isTrue();
            assertThat(node.exitValue()).as(out).isZero();
            assertThat(out).contains("# pass 4", "# fail 0");
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
