package dev.weft.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * AOT caches (JDK 25, JEP 483/514/515) for the experiment's JVMs other than the sidecars (which have their own,
 * {@code SidecarJvm}): the control plane, the example provider and the example consumer. With a cache a JVM starts
 * with the classes of a training run already loaded and linked and the JIT's method profiles of that run, so the
 * JIT's work is paid once per build rather than in the first minute of every demo (issue 15).
 *
 * <p>{@code ./weft} trains them after a build, before it runs {@code demo}, {@code bench} or {@code load}: one short
 * demo in a JVM of its own whose environment names a directory in {@link #TRAIN_ENV}; the first child of each role
 * then runs with {@code -XX:AOTCacheOutput=DIR/ROLE.aot} and writes {@code DIR/ROLE.options}, the JVM options it was
 * trained with. Afterwards {@code ./weft} names the directory in {@link #USE_ENV}, and a child gets
 * {@code -XX:AOTCache=DIR/ROLE.aot} only when its options are exactly those: a cache given to a JVM whose class path
 * or module options differ is rejected with an error line at every start ({@code docs/operations.md}).
 *
 * <p>Thread: the experiment's; one instance per experiment.
 */
final class AppAot {
    /** Where {@code ./weft} says the caches of this build are (set only when they are fresh). */
    static final String USE_ENV = "WEFT_APP_AOT_DIR";
    /** Set by {@code ./weft} for the training demo only: write the caches here. */
    static final String TRAIN_ENV = "WEFT_APP_AOT_TRAIN_DIR";
    /** The subcommands whose JVMs get a cache; the sidecars get theirs from {@code SidecarJvm}. */
    static final List<String> ROLES = List.of("control", "provider", "consumer");
    /**
     * A training JVM writes its cache as it exits, by starting a second JVM that assembles it: on a busy 2-core
     * machine that takes far longer than an ordinary stop, and a process killed meanwhile writes nothing.
     */
    static final Duration TRAINING_STOP_GRACE = Duration.ofMinutes(3);

    private final Path useDir;
    private final Path trainDir;
    private final Set<String> training = new HashSet<>();

    AppAot(Path useDir, Path trainDir) {
        this.useDir = useDir;
        this.trainDir = trainDir;
    }

    static AppAot fromEnvironment() {
        return new AppAot(dir(System.getenv(USE_ENV)), dir(System.getenv(TRAIN_ENV)));
    }

    private static Path dir(String value) {
        return value == null || value.isBlank() ? null : Path.of(value);
    }

    boolean training() {
        return trainDir != null;
    }

    /** How long to wait for the children to exit: longer while they write their caches. */
    Duration stopGrace(Duration usual) {
        return training() ? TRAINING_STOP_GRACE : usual;
    }

    /**
     * The options to start a child of {@code role} with: {@code jvmOptions}, plus the cache option when there is
     * one for this role and these options (or, in a training run, for the first child of each role).
     */
    List<String> options(String role, List<String> jvmOptions) {
        if (!ROLES.contains(role)) {
            return jvmOptions;
        }
        List<String> out = new ArrayList<>(jvmOptions);
        if (trainDir != null) {
            if (training.add(role)) {
                write(trainDir.resolve(role + ".options"), String.join("\n", jvmOptions));
                out.add("-XX:AOTCacheOutput=" + trainDir.resolve(role + ".aot"));
            }
        } else if (useDir != null) {
            Path cache = useDir.resolve(role + ".aot");
            Path trainedWith = useDir.resolve(role + ".options");
            if (Files.isRegularFile(cache) && Files.isRegularFile(trainedWith)
                    && read(trainedWith).equals(String.join("\n", jvmOptions))) {
                out.add("-XX:AOTCache=" + cache);
            }
        }
        return out;
    }

    /** For the reports: which roles ran with a cache. */
    String describe() {
        if (trainDir != null) {
            return "training AOT caches in " + trainDir;
        }
        if (useDir == null) {
            return "no AOT cache for the control plane and the apps";
        }
        List<String> with = ROLES.stream().filter(r -> Files.isRegularFile(useDir.resolve(r + ".aot"))).toList();
        return "AOT caches for " + (with.isEmpty() ? "none" : String.join(", ", with)) + " (when their options are "
                + "the trained ones)";
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }
}
