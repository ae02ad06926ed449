package dev.weft.bench;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Which program drives an experiment's measured load. Both send the same requests (POST of 16 to 64 random
 * characters), verify every answer against {@code hashCode(data)}, count a wrong body as an error, and fill the
 * same {@link LoadResult}; both report their own CPU time per request.
 */
public enum Generator {
    /** The bench's own closed-loop generator in this JVM ({@link LoadGenerator}). */
    BUILTIN,
    /** wrk from apt, a child process, with a Lua script that verifies every answer ({@link WrkGenerator}). */
    WRK;

    /** The name on the command line and in the tables. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Generator named(String name) {
        for (Generator g : values()) {
            if (g.label().equals(name)) {
                return g;
            }
        }
        throw new IllegalArgumentException("unknown load generator '" + name + "' (expected builtin or wrk)");
    }

    /**
     * Runs one load: the warm-up, then the measured window, with {@code listener} told at the window's edges.
     * wrk reports no seconds ({@link LoadGenerator.PhaseListener#second}): the fault scenarios use the built-in one.
     *
     * @param workDir where wrk's script and output go (the experiment's run directory)
     */
    LoadResult run(LoadGenerator.Settings load, LoadGenerator.PhaseListener listener, Path workDir)
            throws InterruptedException {
        return switch (this) {
            case BUILTIN -> LoadGenerator.run(load, listener);
            case WRK -> WrkGenerator.run(load, listener, workDir);
        };
    }
}
