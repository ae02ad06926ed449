package dev.weft.dataplane;

import picocli.CommandLine;

/**
 * The {@code weft sidecar} command with its two required flags, {@code --mtls permissive} (strict, the default,
 * would need a join token to build a config) and {@code flags} parsed, as the CLI parses them.
 */
final class SidecarFlags {
    private SidecarFlags() {}

    static SidecarCommand parse(String... flags) {
        SidecarCommand cmd = new SidecarCommand();
        String[] args = new String[flags.length + 6];
        args[0] = "--service";
        args[1] = "s";
        args[2] = "--app";
        args[3] = "127.0.0.1:1";
        args[4] = "--mtls";
        args[5] = "permissive";
        System.arraycopy(flags, 0, args, 6, flags.length);
        new CommandLine(cmd).parseArgs(args);
        return cmd;
    }
}
