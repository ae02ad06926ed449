package dev.weft.bench;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The command line of a Weft JVM the bench starts as its own process (the experiment's control plane, apps and
 * sidecars, {@code weft apply}): this JDK, the flags every Weft JVM needs, this JVM's class path made absolute.
 */
final class ChildJvm {
    /** Flags every Weft JVM needs on JDK 25 (Netty's Unsafe and native access), plus a lean collector. */
    static final List<String> FLAGS = List.of("--enable-native-access=ALL-UNNAMED",
            "--sun-misc-unsafe-memory-access=allow", "-Dio.netty.noUnsafe=false", "-XX:+UseSerialGC");

    private ChildJvm() {}

    /**
     * {@code java FLAGS jvmOptions -cp CLASSPATH mainClass args}.
     *
     * @param jvmOptions options after {@link #FLAGS}, e.g. {@code -Xmx256m}; may be empty
     */
    static List<String> command(List<String> jvmOptions, String mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(FLAGS);
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(absoluteClassPath());
        command.add(mainClass);
        command.addAll(args);
        return command;
    }

    /** This JVM's class path with every entry made absolute, so the children do not depend on the working directory. */
    static String absoluteClassPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath().normalize().toString())
                .collect(Collectors.joining(File.pathSeparator));
    }

    /** The JVM running this one, so children use the same JDK 25 without needing JAVA_HOME. */
    static String javaExecutable() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }
}
