package dev.weft.cli;

import dev.weft.bench.BenchCommand;
import dev.weft.bench.DemoCommand;
import dev.weft.bench.LoadCommand;
import dev.weft.control.ControlCommand;
import dev.weft.control.ca.TokenCommand;
import dev.weft.control.cli.DashboardCommand;
import dev.weft.control.cli.DiagnoseCommand;
import dev.weft.control.cli.StatCommand;
import dev.weft.control.cli.TopCommand;
import dev.weft.control.cli.TraceCommand;
import dev.weft.dataplane.ApplyCommand;
import dev.weft.dataplane.SidecarCommand;
import dev.weft.registry.support.StartupTrace;
import dev.weft.examples.ConsumerCommand;
import dev.weft.examples.ProviderCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Properties;

/**
 * The {@code ./weft} command. Each subcommand lives in the module it runs (sidecar in the data plane, control in the
 * control plane...); this class only gathers them.
 *
 * <p>Subcommands are added to picocli by hand rather than listed in {@code @Command(subcommands = ...)}: picocli
 * reflects over every option of every subcommand it is given, and a sidecar must be ready in a few hundred ms
 * (docs/benchmarks.md). So when the first argument names a subcommand only that one is built; anything else
 * ({@code weft}, {@code weft --help}, {@code weft help sidecar}, a typo) gets them all, for the full usage and
 * picocli's "did you mean" suggestions.
 */
@Command(name = "weft", mixinStandardHelpOptions = true, versionProvider = WeftCli.Version.class,
        description = "Weft: a service mesh for the JVM.")
public final class WeftCli implements Runnable {
    /** In the order the usage lists them. */
    static final List<String> SUBCOMMANDS = List.of("sidecar", "control", "demo", "provider", "consumer", "load",
            "bench", "trace", "diagnose", "stat", "top", "dashboard", "apply", "token", "help");

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        StartupTrace.mark("main");
        // Bad flags: say what was wrong and show the usage of that subcommand, exit 2 (picocli's convention).
        CommandLine cli = commandLine(args);
        StartupTrace.mark("command model built (picocli)");
        int code = cli.execute(args);
        System.exit(code);
    }

    /** The command line for these arguments: with only the subcommand they name, or with all of them. */
    static CommandLine commandLine(String... args) {
        CommandLine cli = new CommandLine(new WeftCli());
        if (args.length > 0 && !args[0].equals("help") && SUBCOMMANDS.contains(args[0])) {
            cli.addSubcommand(args[0], subcommand(args[0]));
        } else {
            for (String name : SUBCOMMANDS) {
                cli.addSubcommand(name, subcommand(name));
            }
        }
        // Every subcommand has --version (mixinStandardHelpOptions); without a provider it printed nothing.
        for (CommandLine sub : cli.getSubcommands().values()) {
            sub.getCommandSpec().versionProvider(new Version());
        }
        return cli;
    }

    /** The build's version, from the POM (resource filtering), never written by hand. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties p = new Properties();
            try (InputStream in = WeftCli.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            }
            return new String[]{"weft " + p.getProperty("version", "(unknown: built without Maven)")
                    + ", Java " + Runtime.version()};
        }
    }

    /** A switch rather than a map of constructors: no other subcommand's class is even loaded. */
    private static Object subcommand(String name) {
        return switch (name) {
            case "sidecar" -> new SidecarCommand();
            case "control" -> new ControlCommand();
            case "demo" -> new DemoCommand();
            case "provider" -> new ProviderCommand();
            case "consumer" -> new ConsumerCommand();
            case "load" -> new LoadCommand();
            case "bench" -> new BenchCommand();
            case "trace" -> new TraceCommand();
            case "diagnose" -> new DiagnoseCommand();
            case "stat" -> new StatCommand();
            case "top" -> new TopCommand();
            case "dashboard" -> new DashboardCommand();
            case "apply" -> new ApplyCommand();
            case "token" -> new TokenCommand();
            case "help" -> new CommandLine.HelpCommand();
            default -> throw new IllegalArgumentException("unknown subcommand '" + name + "' (known: "
                    + String.join(", ", SUBCOMMANDS) + ")");
        };
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
