package dev.weft.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code weft} subcommand running as its own OS process, started with this JVM's java and class path. Output goes
 * to a log file; {@link #awaitLine} waits (with a timeout) for a line matching a pattern, e.g. the bound port.
 */
final class ChildJvm implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private ChildJvm(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * A join token for {@code service} from the control plane at {@code registry}, whose data dir is
     * {@code dir/control} (its generated admin.token pays for it), in a file for the sidecar's {@code --token-file}:
     * registering needs credentials (docs/security.md). Tests about failures and timing pass {@code --mtls off} with
     * it: the token then proves only the registration, and the link stays the plaintext one they were written for
     * (with certificates, KillProviderSidecarTest's first sidecar twice printed nothing within its 30 s on a 2-core
     * machine at load average 25 to 30; with --mtls off it starts as before).
     */
    static Path tokenFile(Path dir, String registry, String service) throws IOException {
        try {
            String token = dev.weft.control.ca.TokenCommand.create(registry, dir.resolve("control")
                    .resolve(dev.weft.control.ca.AdminToken.FILE), service, Duration.ofHours(1), false).token();
            return java.nio.file.Files.writeString(java.nio.file.Files.createTempFile(dir, service, ".token"), token);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while making a join token", e);
        }
    }

    static ChildJvm start(String name, Path dir, String... args) throws IOException {
        return start(name, dir, null, args);
    }

    /** @param workDir the process's working directory (what relative defaults such as .weft/control resolve in), or null */
    static ChildJvm start(String name, Path dir, Path workDir, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(Arrays.asList(System.getProperty("weft.jvm.flags", "").trim().split("\\s+")));
        // Children run Netty's leak detector at paranoid level too; close() fails the test on any report.
        cmd.addAll(List.of("-Xmx128m", "-XX:+UseSerialGC", "-Dio.netty.leakDetection.level=paranoid", "-cp", System.getProperty("java.class.path"), WeftCli.class.getName()));
        cmd.addAll(Arrays.asList(args));
        cmd.removeIf(String::isEmpty);
        Path log = dir.resolve(name + ".log");
        ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        if (workDir != null) {
            builder.directory(workDir.toFile());
        }
        Process p = builder.start();
        return new ChildJvm(name, p, log);
    }

    /** Waits for a log line matching {@code regex} and returns its first group. */
    String awaitLine(String regex, Duration timeout) throws IOException, InterruptedException {
        Pattern pattern = Pattern.compile(regex);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(java.nio.file.Files.newInputStream(log), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    Matcher m = pattern.matcher(line);
                    if (m.find()) {
                        return m.groupCount() > 0 ? m.group(1) : line;
                    }
                }
            }
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + ":\n" + tail());
            }
            Thread.sleep(50);
        }
        throw new AssertionError(name + " did not print /" + regex + "/ within " + timeout + ":\n" + tail());
    }

    String tail() throws IOException {
        List<String> lines = java.nio.file.Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    long pid() {
        return process.pid();
    }

    /** SIGTERM, without waiting: what an orchestrator sends to stop a process. */
    void sigterm() {
        process.destroy();
    }

    /** Waits for the process to exit and returns its exit code; fails if it is still running after the timeout. */
    int awaitExit(Duration timeout) throws InterruptedException, IOException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " still running after " + timeout + ":\n" + tail());
        }
        return process.exitValue();
    }

    /** The process's children now (the app a sidecar started, for example). */
    List<ProcessHandle> children() {
        return process.children().toList();
    }

    /** SIGKILL: the process gets no chance to deregister or drain. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Stops the process (SIGTERM, then SIGKILL after 10 s) and fails if it reported a leaked buffer. */
    @Override
    public void close() throws InterruptedException, IOException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        }
        String leaks = java.nio.file.Files.readAllLines(log).stream().filter(l -> l.contains("LEAK:"))
                .collect(java.util.stream.Collectors.joining("\n"));
        if (!leaks.isEmpty()) {
            throw new AssertionError(name + " reported Netty buffer leaks:\n" + leaks);
        }
    }

}
