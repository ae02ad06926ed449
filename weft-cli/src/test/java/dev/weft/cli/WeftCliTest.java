package dev.weft.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class WeftCliTest {

    @Test
    void aNamedSubcommandIsTheOnlyOneBuilt() {
        CommandLine cli = WeftCli.commandLine("sidecar", "--service", "a", "--app", "127.0.0.1:1");
        assertThat(cli.getSubcommands()).containsOnlyKeys("sidecar");
    }

    @Test
    void noSubcommandOrAnUnknownOneGetsThemAllForUsageAndSuggestions() {
        assertThat(WeftCli.commandLine().getSubcommands().keySet()).containsExactlyElementsOf(WeftCli.SUBCOMMANDS);
        assertThat(WeftCli.commandLine("--help").getSubcommands().keySet()).containsExactlyElementsOf(WeftCli.SUBCOMMANDS);
        assertThat(WeftCli.commandLine("help", "sidecar").getSubcommands().keySet())
                .containsExactlyElementsOf(WeftCli.SUBCOMMANDS);

        StringWriter err = new StringWriter();
        CommandLine cli = WeftCli.commandLine("sidcar");
        cli.setErr(new PrintWriter(err));
        assertThat(cli.execute("sidcar")).isEqualTo(2);
        assertThat(err.toString()).contains("Did you mean: weft sidecar");
    }

    @Test
    void theBareCommandPrintsEverySubcommand() {
        StringWriter out = new StringWriter();
        CommandLine cli = WeftCli.commandLine();
        cli.setOut(new PrintWriter(out));
        // run() prints through System.out; the usage picocli renders is the same text.
        cli.usage(new PrintWriter(out));
        for (String name : WeftCli.SUBCOMMANDS) {
            assertThat(out.toString()).contains("  " + name + " ");
        }
    }

    @Test
    void everyCommandPrintsTheBuildsVersion() {
        // The POM's version, filtered in at build time: digits, never the "unknown" fallback.
        String expected = "weft \\d+\\.\\d+\\.\\d+[^,]*, Java .*\\R?";
        for (String name : WeftCli.SUBCOMMANDS) {
            if (name.equals("help")) {
                continue;
            }
            StringWriter out = new StringWriter();
            CommandLine cli = WeftCli.commandLine(name, "--version");
            cli.setOut(new PrintWriter(out));
            assertThat(cli.execute(name, "--version")).isZero();
            assertThat(out.toString()).as(name).matches(expected);
        }
        StringWriter out = new StringWriter();
        CommandLine root = WeftCli.commandLine("--version");
        root.setOut(new PrintWriter(out));
        assertThat(root.execute("--version")).isZero();
        assertThat(out.toString()).matches(expected);
    }

    @Test
    void theCommandListShowsEachDescriptionsWholeFirstSentence() {
        // The command list shows only the first line of each description: it must be a whole sentence.
        CommandLine cli = WeftCli.commandLine();
        for (String name : WeftCli.SUBCOMMANDS) {
            String[] description = cli.getSubcommands().get(name).getCommandSpec().usageMessage().description();
            assertThat(description).as(name).isNotEmpty();
            assertThat(description[0]).as(name).endsWith(".");
        }
    }

    @Test
    void everyHelpTextRendersWithoutAFormatWarning() {
        // picocli formats descriptions with String.format: a bare "5%" made it print a WARN on stderr and show the
        // raw text (seen in `weft demo --help` and `weft bench observability --help`).
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            for (String name : WeftCli.SUBCOMMANDS) {
                renderAll(WeftCli.commandLine(name).getSubcommands().get(name));
            }
        } finally {
            System.setErr(saved);
        }
        assertThat(err.toString(StandardCharsets.UTF_8)).doesNotContain("WARN");
    }

    private static void renderAll(CommandLine cli) {
        cli.usage(new PrintWriter(new StringWriter()));
        for (CommandLine sub : cli.getSubcommands().values()) {
            renderAll(sub);
        }
    }
}
