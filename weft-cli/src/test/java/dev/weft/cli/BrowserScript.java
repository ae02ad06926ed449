package dev.weft.cli;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs one of the browser scripts of src/test/js (headless Debian Chromium through playwright-core) against a running
 * control plane, with a timeout, and fails the test with the script's output unless it exits 0. Skips, saying what is
 * missing, only when Chromium or playwright-core is absent (.ci/run installs both). Screenshots and the script's log go
 * to target/dashboard-screenshots/.
 */
final class BrowserScript {
    private BrowserScript() {}

    /** Whether {@link #run} would run a script here (Chromium and playwright-core installed) rather than skip. */
    static boolean available() {
        return Files.isExecutable(chromium()) && Files.isDirectory(js().resolve("node_modules/playwright-core"));
    }

    private static Path js() {
        return Path.of("src/test/js").toAbsolutePath();
    }

    private static Path chromium() {
        return Path.of(System.getenv().getOrDefault("WEFT_CHROMIUM", "/usr/bin/chromium"));
    }

    /**
     * @param more the script's arguments after the base URL, the output folder and Chromium's path (e.g. culprit.mjs's
     *             expected culprit and back-pressure services)
     * @return the script's output
     */
    static String run(String script, String base, String... more) throws Exception {
        Path js = js();
        Path chromium = chromium();
        Assumptions.assumeTrue(Files.isExecutable(chromium), "skipped: no Chromium at " + chromium
                + " (apt-get install chromium; .ci/run installs it)");
        Assumptions.assumeTrue(Files.isDirectory(js.resolve("node_modules/playwright-core")),
                "skipped: playwright-core not installed (npm ci --prefix weft-cli/src/test/js; .ci/run does it)");
        Path shots = Path.of("target/dashboard-screenshots").toAbsolutePath();
        Files.createDirectories(shots);
        Path log = shots.resolve(script.replace(".mjs", ".log"));
        List<String> command = new ArrayList<>(List.of("node", js.resolve(script).toString(), base, shots.toString(),
                chromium.toString()));
        command.addAll(List.of(more));
        Process node = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            boolean finished = node.waitFor(150, TimeUnit.SECONDS);
            String out = Files.readString(log);
            assertThat(finished).as(script + " still running after 150 s:\n" + out).isTrue();
            assertThat(node.exitValue()).as(out).isZero();
            return out;
        } finally {
            node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
