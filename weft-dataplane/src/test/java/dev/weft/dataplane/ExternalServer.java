package dev.weft.dataplane;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real third-party server for a test (Prometheus, Zipkin), started as a child process that binds port 0 on
 * loopback and logs the port it got: {@link #awaitLine} reads it back. Its output is kept for failure messages.
 * {@link #close} stops that process only (SIGTERM, then SIGKILL after 10 s).
 */
final class ExternalServer implements AutoCloseable {
    private final String name;
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();

    ExternalServer(String name, ProcessBuilder builder) throws IOException {
        this.name = name;
        this.process = builder.redirectErrorStream(true).start();
        Thread.ofPlatform().daemon().name(name + "-output").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
    }

    /** The first group of the first output line matching {@code pattern}, waiting at most {@code timeout}. */
    String awaitLine(Pattern pattern, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !process.isAlive() && lines.isEmpty()) {
                throw new AssertionError(name + (process.isAlive() ? " did not log " + pattern + " within " + timeout
                        : " exited with " + process.exitValue()) + "; its output:\n" + String.join("\n", tail()));
            }
            String line = lines.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS);
            if (line == null) {
                continue;
            }
            seen.add(line);
            Matcher m = pattern.matcher(line);
            if (m.find()) {
                return m.group(1);
            }
        }
    }

    List<String> tail() {
        lines.drainTo(seen);
        return seen.subList(Math.max(0, seen.size() - 40), seen.size());
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
