package dev.weft.cli;

import dev.weft.bench.BenchCommand;
import dev.weft.bench.DemoCommand;
import dev.weft.bench.LoadCommand;
import dev.weft.control.ControlCommand;
import dev.weft.control.cli.StatCommand;
import dev.weft.control.cli.TopCommand;
import dev.weft.control.cli.TraceCommand;
import dev.weft.dataplane.ApplyCommand;
import dev.weft.dataplane.SidecarCommand;
import dev.weft.examples.ConsumerCommand;
import dev.weft.examples.ProviderCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ./weft} command. Each subcommand lives in the module it runs (sidecar in the data plane, control in the
 * control plane...); this class only gathers them.
 */
@Command(name = "weft", mixinStandardHelpOptions = true, version = "weft 0.1.0",
        description = "Weft: a service mesh for the JVM.",
        subcommands = {SidecarCommand.class, ControlCommand.class, DemoCommand.class, ProviderCommand.class,
                ConsumerCommand.class, LoadCommand.class, BenchCommand.class, TraceCommand.class, StatCommand.class,
                TopCommand.class, ApplyCommand.class, CommandLine.HelpCommand.class})
public final class WeftCli implements Runnable {

    public static void main(String[] args) {
        CommandLine cli = new CommandLine(new WeftCli());
        // Bad flags: say what was wrong and show the usage of that subcommand, exit 2 (picocli's convention).
        int code = cli.execute(args);
        System.exit(code);
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
