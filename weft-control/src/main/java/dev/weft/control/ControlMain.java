package dev.weft.control;

import picocli.CommandLine;

/** Runs {@link ControlCommand} on its own, without the rest of the CLI; tests start it as a separate JVM. */
public final class ControlMain {
    private ControlMain() {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new ControlCommand()).execute(args));
    }
}
