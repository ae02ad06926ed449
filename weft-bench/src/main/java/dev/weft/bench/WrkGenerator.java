package dev.weft.bench;

import dev.weft.registry.support.Durations;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * wrk (from apt, LuaJIT inside) as the experiment's load generator: the same closed loop as {@link LoadGenerator}
 * in a C program that costs less CPU per request, with {@code resources/wrk/verify-hash.lua} sending the requests
 * and checking every answer (see the script for how, and for the one thing it cannot see).
 *
 * <p>wrk has no warm-up, so a warm-up is a run of its own whose results are dropped; the measured run follows on
 * fresh connections, and the listener's window is that run, from its start to its exit. wrk runs under
 * {@code sh}, which reads its own {@code /proc/PID/stat} after wrk exits: its children's CPU (cutime + cstime) is
 * wrk's whole CPU time, the generator's own CPU in the tables.
 *
 * <p>What becomes of wrk's figures: the answers the script verified are the successes; answers with a status other
 * than 200 are counted by status and origin; 200s with a wrong body are {@link ErrorCounts#wrongBody()}; wrk's
 * socket errors (connect, read, write) are connection errors and its timeouts timeouts. Latency is wrk's
 * ({@code --latency}: p50, p90, p99, max), which covers every answer, failures included, where the built-in
 * generator's covers only verified ones.
 */
final class WrkGenerator {
    static final String SCRIPT_RESOURCE = "/wrk/verify-hash.lua";
    static final String SCRIPT_FILE = "wrk-verify-hash.lua";
    private static final Duration EXIT_GRACE = Duration.ofSeconds(30);
    private static final String STAT_LINE = "weft-wrk-shell-stat ";
    /** Runs wrk, then prints the shell's own stat line: its cutime and cstime are then wrk's CPU. */
    private static final String SHELL =
            "wrk \"$@\"; rc=$?; read -r stat < /proc/$$/stat; echo \"" + STAT_LINE + "$stat\"; exit $rc";

    private WrkGenerator() {}

    static LoadResult run(LoadGenerator.Settings settings, LoadGenerator.PhaseListener listener, Path dir)
            throws InterruptedException {
        Path script = writeScript(dir);
        PrintStream out = settings.progress();
        int threads = Math.min(settings.threads(), settings.connections());
        if (!settings.warmup().isZero()) {
            say(out, String.format(Locale.ROOT, "wrk  warm-up    %ds, %d connections on %d thread%s (not recorded)",
                    seconds(settings.warmup()), settings.connections(), threads, threads == 1 ? "" : "s"));
            execute(command(settings, threads, settings.warmup(), script), settings.warmup(),
                    dir.resolve("wrk-" + settings.connections() + "-warmup.log"));
        }
        say(out, String.format(Locale.ROOT, "wrk  measuring  %ds, %d connections on %d thread%s",
                seconds(settings.duration()), settings.connections(), threads, threads == 1 ? "" : "s"));
        listener.measurementStarting();
        Path log = dir.resolve("wrk-" + settings.connections() + "-measured.log");
        String text = execute(command(settings, threads, settings.duration(), script), settings.duration(), log);
        listener.measurementEnded();
        Output output = parse(text, log);
        LoadResult result = output.toLoadResult(settings, threads);
        say(out, String.format(Locale.ROOT, "wrk  measured   %s  qps %8.1f  answers %d (non-2xx %d)  errors %d (%s)",
                Durations.format(result.measured()), result.qps(), output.responses(), output.non2xx(),
                result.errors().total(), result.errors().describe()));
        return result;
    }

    /** The script, written where wrk reads it (and where a person rerunning wrk by hand finds it). */
    static Path writeScript(Path dir) {
        Path file = dir.resolve(SCRIPT_FILE);
        try {
            Files.createDirectories(dir);
            Files.writeString(file, script(), StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write wrk's script " + file, e);
        }
    }

    static String script() {
        try (InputStream in = WrkGenerator.class.getResourceAsStream(SCRIPT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + SCRIPT_RESOURCE + " in weft-bench");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read resource " + SCRIPT_RESOURCE, e);
        }
    }

    /** {@code sh -c SHELL sh wrk-args...}; wrk takes whole seconds, so durations are rounded up to them. */
    static List<String> command(LoadGenerator.Settings settings, int threads, Duration duration, Path script) {
        return List.of("sh", "-c", SHELL, "sh", "-t", Integer.toString(threads),
                "-c", Integer.toString(settings.connections()), "-d", seconds(duration) + "s",
                "--timeout", seconds(settings.timeout()) + "s", "--latency", "-s", script.toString(),
                settings.url().toString());
    }

    private static long seconds(Duration d) {
        return Math.max(1, (d.toMillis() + 999) / 1000);
    }

    /** Runs the command to its end with its output in {@code log}, and returns that output. */
    private static String execute(List<String> command, Duration duration, Path log) throws InterruptedException {
        if (!PeerDataPlane.onPath("wrk")) {
            throw new IllegalStateException("wrk is not installed (apt-get install -y wrk), needed by --generator wrk");
        }
        try {
            Files.writeString(log, "# " + String.join(" ", command) + System.lineSeparator(), StandardCharsets.UTF_8);
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            long seconds = seconds(duration);
            try {
                if (!process.waitFor(seconds * 1000 + EXIT_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("wrk did not finish within " + (seconds + EXIT_GRACE.toSeconds())
                            + " s; its output is in " + log);
                }
            } finally {
                process.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IllegalStateException("wrk exited with code " + process.exitValue() + "; output in " + log
                        + ":\n" + tail(output));
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run wrk (output " + log + ")", e);
        }
    }

    private static String tail(String output) {
        List<String> lines = output.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    }

    private static void say(PrintStream out, String line) {
        if (out != null) {
            out.println(line);
        }
    }

    /**
     * What one wrk run printed: its own report ({@code --latency}) and the script's lines.
     *
     * @param responses   answers of any status (wrk's "N requests in")
     * @param seconds     the run's length, from the script (microseconds) or else wrk's report
     * @param p50Ms       and the others: wrk's latency distribution and maximum, over every answer
     * @param socketErrors connect + read + write
     * @param non2xx      wrk's "Non-2xx or 3xx responses"
     * @param verified    200 answers whose body was the hash of a request in flight
     * @param mismatches  200 answers whose body was not
     * @param byOrigin    answers with another status than 200, by "STATUS ORIGIN"
     * @param cpuTicks    wrk's CPU time in clock ticks; -1 when the shell's stat line is missing
     */
    record Output(long responses, double seconds, double p50Ms, double p90Ms, double p99Ms, double maxMs,
                  long socketErrors, long timeouts, long non2xx, long verified, long mismatches,
                  TreeMap<String, Long> byOrigin, long cpuTicks) {

        LoadResult toLoadResult(LoadGenerator.Settings settings, int threads) {
            TreeMap<Integer, Long> byStatus = new TreeMap<>();
            byOrigin.forEach((key, count) -> byStatus.merge(Integer.parseInt(key.split(" ", 2)[0]), count, Long::sum));
            ErrorCounts errors = new ErrorCounts(byStatus, byOrigin, mismatches, socketErrors, timeouts);
            Duration measured = Duration.ofNanos(Math.round(seconds * 1e9));
            Duration delay = settings.serviceDelay();
            double ceiling = delay.isZero() ? Double.NaN : settings.connections() / (delay.toNanos() / 1e9);
            Duration cpu = Duration.ofNanos(Math.max(0, cpuTicks) * (1_000_000_000L / ProcStats.TICKS_PER_SECOND));
            return new LoadResult(settings.url(), settings.connections(), threads, settings.warmup(), measured,
                    verified + errors.total(), verified, errors, seconds > 0 ? verified / seconds : 0,
                    new LoadResult.Latency(p50Ms, p90Ms, p99Ms, maxMs, responses), ceiling, delay, cpu);
        }
    }

    private static final String TIME = "([\\d.]+)(us|ms|s|m|h)";
    private static final Pattern REQUESTS = Pattern.compile("(?m)^\\s*(\\d+) requests in " + TIME);
    private static final Pattern LATENCY = Pattern.compile("(?m)^\\s*Latency\\s+" + TIME + "\\s+" + TIME + "\\s+" + TIME);
    private static final Pattern PERCENTILE = Pattern.compile("(?m)^\\s*(50|75|90|99)(?:\\.0+)?%\\s+" + TIME);
    private static final Pattern SOCKET = Pattern.compile(
            "Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");
    private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");
    private static final Pattern VERIFIED = Pattern.compile(
            "(?m)^weft-wrk verified=(\\d+) mismatches=(\\d+) responses=(\\d+) duration_us=(\\d+)");
    private static final Pattern STATUS = Pattern.compile("(?m)^weft-wrk status count=(\\d+) (\\d{3} .*)$");

    /**
     * Parses wrk's report and the script's lines.
     *
     * @param log named in the error when the output is not what wrk with this script prints
     */
    static Output parse(String text, Path log) {
        Matcher requests = REQUESTS.matcher(text);
        Matcher verified = VERIFIED.matcher(text);
        if (!requests.find()) {
            throw new IllegalStateException("wrk's output has no 'N requests in' line; output in " + log + ":\n"
                    + tail(text));
        }
        if (!verified.find()) {
            throw new IllegalStateException("wrk's output has no line from the script's done() (weft-wrk verified=...);"
                    + " output in " + log + ":\n" + tail(text));
        }
        double[] percentiles = new double[100];
        Arrays.fill(percentiles, Double.NaN);
        Matcher p = PERCENTILE.matcher(text);
        while (p.find()) {
            percentiles[Integer.parseInt(p.group(1))] = millis(p.group(2), p.group(3));
        }
        Matcher latency = LATENCY.matcher(text);
        double max = latency.find() ? millis(latency.group(5), latency.group(6)) : Double.NaN;
        long socket = 0;
        long timeouts = 0;
        Matcher s = SOCKET.matcher(text);
        if (s.find()) {
            socket = Long.parseLong(s.group(1)) + Long.parseLong(s.group(2)) + Long.parseLong(s.group(3));
            timeouts = Long.parseLong(s.group(4));
        }
        Matcher n = NON_2XX.matcher(text);
        long non2xx = n.find() ? Long.parseLong(n.group(1)) : 0;
        TreeMap<String, Long> byOrigin = new TreeMap<>();
        Matcher status = STATUS.matcher(text);
        while (status.find()) {
            byOrigin.merge(status.group(2).strip(), Long.parseLong(status.group(1)), Long::sum);
        }
        long durationUs = Long.parseLong(verified.group(4));
        double seconds = durationUs > 0 ? durationUs / 1e6 : millis(requests.group(2), requests.group(3)) / 1e3;
        return new Output(Long.parseLong(requests.group(1)), seconds, percentiles[50], percentiles[90],
                percentiles[99], max, socket, timeouts, non2xx, Long.parseLong(verified.group(1)),
                Long.parseLong(verified.group(2)), byOrigin, cpuTicks(text));
    }

    /** wrk's CPU from the shell's stat line, -1 when it is missing. */
    private static long cpuTicks(String text) {
        int at = text.lastIndexOf(STAT_LINE);
        if (at < 0) {
            return -1;
        }
        String line = text.substring(at + STAT_LINE.length()).lines().findFirst().orElse("");
        OptionalLong ticks = ProcStats.parseChildrenCpuTicks(line);
        return ticks.orElse(-1);
    }

    /** wrk's {@code 51.90ms}, {@code 493.00us}, {@code 1.20s}, {@code 1.00m}, in milliseconds. */
    static double millis(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "us" -> v / 1e3;
            case "ms" -> v;
            case "s" -> v * 1e3;
            case "m" -> v * 60e3;
            case "h" -> v * 3600e3;
            default -> throw new IllegalArgumentException("unknown time unit '" + unit + "' (expected us, ms, s, m, h)");
        };
    }
}
