package dev.weft.bench;

import dev.weft.registry.support.Durations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One OS process of the experiment, with its stdout and stderr in one log file.
 *
 * <p>The log starts with the command line, so a failed run can be reproduced by hand. Startup failures are
 * reported with the process's name, its exit code if it exited, the tail of its log and, when the log shows a bind
 * failure, which of the ports it was given is the culprit.
 */
public final class ChildProcess {
    private static final int TAIL_LINES = 15;
    private static final Duration POLL = Duration.ofMillis(50);
    /** Readiness is polled often: how soon a proxy is ready after it starts is one of the figures reported. */
    private static final Duration READY_POLL = Duration.ofMillis(5);

    private final String name;
    private final Process process;
    private final Path log;
    private final List<Integer> ports;
    private final long startedAt;

    private ChildProcess(String name, Process process, Path log, List<Integer> ports, long startedAt) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.ports = ports;
        this.startedAt = startedAt;
    }

    /**
     * @param ports the ports the command asks the child to bind, named in the error if it cannot
     */
    public static ChildProcess start(String name, List<String> command, Path log, List<Integer> ports)
            throws ExperimentException {
        return start(name, command, Map.of(), log, ports);
    }

    /** @param environment variables added to this process's environment for the child */
    static ChildProcess start(String name, List<String> command, Map<String, String> environment, Path log,
                              List<Integer> ports) throws ExperimentException {
        try {
            Files.writeString(log, "# " + String.join(" ", command) + System.lineSeparator(), StandardCharsets.UTF_8);
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(environment);
            long startedAt = System.nanoTime();
            Process process = builder.start();
            return new ChildProcess(name, process, log, List.copyOf(ports), startedAt);
        } catch (IOException e) {
            throw new ExperimentException("cannot start " + name + " (" + command.getFirst() + "): " + e.getMessage(), e);
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Waits for a line of the child's output matching {@code pattern}, e.g. its "listening on" line. */
    public Matcher awaitOutput(Pattern pattern, String expected, Duration timeout)
            throws ExperimentException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            // Read before checking liveness: a child may print its line and exit right after.
            for (String line : logLines()) {
                Matcher m = pattern.matcher(line);
                if (m.find()) {
                    return m;
                }
            }
            if (!process.isAlive()) {
                throw failure("exited with code " + process.exitValue() + " before printing '" + expected + "'");
            }
            if (System.nanoTime() > deadline) {
                throw failure("did not print '" + expected + "' within " + Durations.format(timeout));
            }
            TimeUnit.NANOSECONDS.sleep(POLL.toNanos());
        }
    }

    /**
     * Waits until {@code GET url} answers 200 (a sidecar's {@code /ready}).
     *
     * @return the time from starting the process to that first 200, to within the poll interval
     */
    Duration awaitReady(HttpProbe http, URI url, Duration timeout) throws ExperimentException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer yet";
        while (true) {
            if (!process.isAlive()) {
                throw failure("exited with code " + process.exitValue() + " before " + url + " answered 200");
            }
            try {
                HttpResponse<String> response = http.get(url, Duration.ofSeconds(2));
                if (response.statusCode() == 200) {
                    return sinceStart();
                }
                last = "last answer " + response.statusCode() + " " + oneLine(response.body());
            } catch (IOException e) {
                last = "last attempt: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            }
            if (System.nanoTime() > deadline) {
                throw failure("was not ready within " + Durations.format(timeout) + " (GET " + url
                        + ": " + last + ")");
            }
            TimeUnit.NANOSECONDS.sleep(READY_POLL.toNanos());
        }
    }

    /**
     * Waits until {@code 127.0.0.1:port} accepts a TCP connection: readiness of a program without a readiness
     * endpoint (nginx, HAProxy, Caddy).
     *
     * @return the time from starting the process to that first accepted connection
     */
    Duration awaitListening(int port, Duration timeout) throws ExperimentException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no attempt yet";
        while (true) {
            if (!process.isAlive()) {
                throw failure("exited with code " + process.exitValue() + " before it accepted connections on 127.0.0.1:"
                        + port);
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
                return sinceStart();
            } catch (IOException e) {
                last = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            }
            if (System.nanoTime() > deadline) {
                throw failure("did not accept connections on 127.0.0.1:" + port + " within "
                        + Durations.format(timeout) + " (last attempt: " + last + ")");
            }
            TimeUnit.NANOSECONDS.sleep(READY_POLL.toNanos());
        }
    }

    private Duration sinceStart() {
        return Duration.ofNanos(System.nanoTime() - startedAt);
    }

    /** Builds the error for a child that failed to start: what happened, the log's tail, a bind diagnosis. */
    ExperimentException failure(String what) {
        List<String> lines = logLines();
        StringBuilder message = new StringBuilder(name).append(" (pid ").append(process.pid()).append(") ")
                .append(what).append('.');
        String bind = bindDiagnosis(lines, ports);
        if (bind != null) {
            message.append(' ').append(bind);
        }
        message.append(System.lineSeparator()).append("Last lines of ").append(log).append(':');
        for (String line : lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size())) {
            message.append(System.lineSeparator()).append("  | ").append(line);
        }
        return new ExperimentException(message.toString());
    }

    /**
     * Null unless the log reports a bind failure; then names the port: the one the log mentions next to the
     * failure, else all the ports this child was given.
     */
    static String bindDiagnosis(List<String> lines, List<Integer> ports) {
        Pattern bindFailure = Pattern.compile("(?i)address already in use|BindException|bind\\(.*\\) failed|cannot bind|could not bind");
        List<String> failures = lines.stream().filter(l -> bindFailure.matcher(l).find()).toList();
        if (failures.isEmpty()) {
            return null;
        }
        String text = String.join("\n", failures);
        List<Integer> named = ports.stream()
                .filter(p -> Pattern.compile("(?<!\\d)" + p + "(?!\\d)").matcher(text).find())
                .toList();
        List<Integer> culprits = named.isEmpty() ? ports : named;
        String list = culprits.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(", "));
        if (culprits.size() == 1) {
            return "It could not bind " + list + ": another process took the port after the demo picked it; run again.";
        }
        return "It could not bind one of its ports (" + list + "): another process took it after the demo picked it;"
                + " run again.";
    }

    List<String> logLines() {
        try {
            return Arrays.asList(Files.readString(log, StandardCharsets.UTF_8).split("\\R"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + log, e);
        }
    }

    /** Asks the process to stop (SIGTERM) without waiting. */
    void terminate() {
        process.destroy();
    }

    void kill() {
        process.destroyForcibly();
    }

    /** SIGTERM, then SIGKILL if it has not exited within {@code grace}. */
    public void stop(Duration grace) throws InterruptedException {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private static String oneLine(String body) {
        String line = body == null ? "" : body.strip().replaceAll("\\s+", " ");
        return line.length() > 120 ? line.substring(0, 120) + "..." : line;
    }
}
