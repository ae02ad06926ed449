package dev.weft.examples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code weft consumer}: runs the paper's consumer until the process is terminated. */
@Command(name = "consumer", mixinStandardHelpOptions = true,
        description = {"Run the example consumer: POST / calls --provider-url with the same data.",
                "It answers with the provider's status and body (502 when the provider cannot be reached).",
                "GET /health answers 200."})
public final class ConsumerCommand implements Callable<Integer> {
    @Option(names = "--listen", required = true, converter = HostPort.Converter.class, paramLabel = "HOST:PORT",
            description = "Address to listen on; port 0 picks a free port (printed once bound).")
    HostPort listen;

    @Option(names = "--provider-url", required = true, paramLabel = "URL",
            description = "http://HOST:PORT of the provider, normally the consumer sidecar's local port for it.")
    URI providerUrl;

    @Option(names = "--max-provider-connections", defaultValue = "2048", paramLabel = "N",
            description = "Keep-alive connections to the provider, at most (default: ${DEFAULT-VALUE}).")
    int maxProviderConnections;

    @Option(names = "--provider-timeout-ms", defaultValue = "10000", paramLabel = "MS",
            description = "Wait this long for the provider's answer before replying 504 (default: ${DEFAULT-VALUE}).")
    long providerTimeoutMs;

    @Option(names = "--io-threads", paramLabel = "N",
            description = "Event loop threads (default: the number of CPUs).")
    Integer ioThreads;

    @Override
    public Integer call() throws Exception {
        ConsumerServer.Settings settings;
        try {
            settings = new ConsumerServer.Settings(listen, providerUrl, maxProviderConnections,
                    Duration.ofMillis(providerTimeoutMs),
                    ioThreads != null ? ioThreads : Runtime.getRuntime().availableProcessors());
        } catch (IllegalArgumentException e) {
            System.err.println("consumer: " + e.getMessage());
            return 2;
        }
        ConsumerServer server;
        try {
            server = ConsumerServer.start(settings);
        } catch (Exception e) {
            System.err.println("consumer: cannot listen on " + listen + ": " + e.getMessage());
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "consumer-shutdown"));
        System.out.println("consumer listening on " + HostPort.of(server.address()));
        System.out.flush();
        server.awaitClose();
        return 0;
    }
}
