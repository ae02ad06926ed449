package dev.weft.examples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code weft provider}: runs one of the paper's providers until the process is terminated. */
@Command(name = "provider", mixinStandardHelpOptions = true,
        description = {"Run an example provider: POST / answers hashCode(data) after --delay-ms.",
                "More than --max-concurrency requests in flight are refused with 503.",
                "GET /health answers 200; GET /stats answers JSON counters."})
public final class ProviderCommand implements Callable<Integer> {
    @Option(names = "--listen", required = true, converter = HostPort.Converter.class, paramLabel = "HOST:PORT",
            description = "Address to listen on; port 0 picks a free port (printed once bound).")
    HostPort listen;

    @Option(names = "--name", defaultValue = "provider", paramLabel = "NAME",
            description = "Name reported in the x-provider header and /stats, e.g. small, medium, large (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--max-concurrency", defaultValue = "200", paramLabel = "N",
            description = "Requests held at once before answering 503 (default: ${DEFAULT-VALUE}).")
    int maxConcurrency;

    @Option(names = "--delay-ms", defaultValue = "50", paramLabel = "MS",
            description = "Simulated computation time per request (default: ${DEFAULT-VALUE}).")
    long delayMs;

    @Option(names = "--fault-factor", defaultValue = "1", paramLabel = "X",
            description = "Injected slowness: answers take X times --delay-ms (default: ${DEFAULT-VALUE}). Also POST /fault?factor=X.")
    double faultFactor;

    @Option(names = "--fault-error-rate", defaultValue = "0", paramLabel = "P",
            description = "Injected failures: this share (0..1) of requests is answered 500 (default: ${DEFAULT-VALUE}). Also POST /fault?error-rate=P.")
    double faultErrorRate;

    @Option(names = "--fault-stall", description = "Injected hang: admit requests and never answer. Also POST /fault?stall=true; POST /fault?crash=true halts the process.")
    boolean faultStall;

    @Option(names = "--io-threads", defaultValue = "1", paramLabel = "N",
            description = "Event loop threads (default: ${DEFAULT-VALUE}; the work is a timer and a hash).")
    int ioThreads;

    @Override
    public Integer call() throws Exception {
        ProviderServer.Settings settings;
        try {
            settings = new ProviderServer.Settings(listen, name, maxConcurrency, Duration.ofMillis(delayMs), ioThreads);
        } catch (IllegalArgumentException e) {
            System.err.println("provider: " + e.getMessage());
            return 2;
        }
        ProviderServer server;
        try {
            server = ProviderServer.start(settings);
        } catch (Exception e) {
            System.err.println("provider " + name + ": cannot listen on " + listen + ": " + e.getMessage());
            return 1;
        }
        server.faults().factor = faultFactor;
        server.faults().errorRate = faultErrorRate;
        server.faults().stall = faultStall;
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "provider-shutdown"));
        System.out.println("provider " + name + " listening on " + HostPort.of(server.address()));
        System.out.flush();
        server.awaitClose();
        return 0;
    }
}
