package dev.weft.bench;

import dev.weft.control.cli.DurationConverter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code weft load}: drives any URL with the benchmark's requests and prints the results block. */
@Command(name = "load", mixinStandardHelpOptions = true,
        description = {"Closed-loop load like wrk, verifying every answer.",
                "Each connection POSTs random data and sends the next request when the answer arrives. Answers must "
                + "be 200 with body hashCode(data); anything else is an error.",
                "Progress goes to stderr once a second, the results block to stdout."})
public final class LoadCommand implements Callable<Integer> {
    @Option(names = "--url", required = true, paramLabel = "URL", description = "Target, e.g. http://127.0.0.1:8080/")
    URI url;

    @Option(names = "--connections", defaultValue = "128", paramLabel = "N",
            description = "Concurrent connections (default: ${DEFAULT-VALUE}; the paper used 128, 256 and 512).")
    int connections;

    @Option(names = "--duration", defaultValue = "30s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Measured time, e.g. 30s or 2m (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "0s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "Unrecorded load before the measurement (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--delay-ms", defaultValue = "50", paramLabel = "MS",
            description = "The target's per-request delay, for the ceiling connections/delay (default: ${DEFAULT-VALUE}; 0 hides it).")
    long delayMs;

    @Option(names = "--timeout", defaultValue = "5s", converter = DurationConverter.class, paramLabel = "TIME",
            description = "A request without an answer this long is a timeout (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--threads", paramLabel = "N", description = "Event loop threads (default: the number of CPUs).")
    Integer threads;

    @Option(names = "--quiet", description = "No progress lines.")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        LoadGenerator.Settings settings;
        try {
            settings = new LoadGenerator.Settings(url, connections, duration, warmup, timeout,
                    threads != null ? threads : Runtime.getRuntime().availableProcessors(),
                    Duration.ofMillis(delayMs), quiet ? null : System.err);
        } catch (IllegalArgumentException e) {
            System.err.println("load: " + e.getMessage());
            return 2;
        }
        LoadResult result = LoadGenerator.run(settings);
        System.out.println("Load results");
        System.out.print(result.describe());
        if (result.successes() == 0) {
            System.err.println("load: no request succeeded against " + url + " (errors: "
                    + result.errors().describe() + ")");
            return 1;
        }
        return 0;
    }
}
