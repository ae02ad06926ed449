package dev.weft.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.weft.examples.ConsumerCommand;
import dev.weft.examples.ProviderCommand;
import picocli.CommandLine;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A stand-in for {@code dev.weft.cli.WeftCli} so {@link Experiment} can be tested before the real sidecar exists:
 * {@code provider} and {@code consumer} are the real example apps; {@code control} and {@code sidecar} are
 * deliberately naive fakes (blocking JDK HTTP, weighted random choice) that speak the same command lines and the
 * same readiness contract ({@code weft control listening on HOST:PORT}, {@code GET /ready}).
 */
public final class FakeMeshCli {
    private FakeMeshCli() {}

    public static void main(String[] args) {
        // The JDK server writes headers and body separately; with Nagle on, delayed ACKs cost 40 ms per request.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        try {
            switch (args[0]) {
                case "provider" -> System.exit(new CommandLine(new ProviderCommand()).execute(rest));
                case "consumer" -> System.exit(new CommandLine(new ConsumerCommand()).execute(rest));
                case "control" -> control(options(rest));
                case "sidecar" -> sidecar(options(rest));
                default -> {
                    System.err.println("unknown command '" + args[0] + "' (expected provider, consumer, control or sidecar)");
                    System.exit(2);
                }
            }
        } catch (Exception e) {
            // Like a real sidecar, fail fast and visibly rather than linger half-started.
            e.printStackTrace();
            System.exit(1);
        }
    }

    /** Registry: {@code /register?service=&address=&weight=} and {@code /endpoints?service=} (lines "address weight"). */
    private static void control(Map<String, String> options) throws IOException {
        Map<String, Map<String, Integer>> services = new ConcurrentHashMap<>();
        HttpServer server = server(options.get("--listen"));
        server.createContext("/register", exchange -> {
            Map<String, String> q = query(exchange);
            services.computeIfAbsent(q.get("service"), s -> new ConcurrentHashMap<>())
                    .put(q.get("address"), Integer.parseInt(q.get("weight")));
            send(exchange, 200, "registered");
        });
        server.createContext("/endpoints", exchange -> {
            StringBuilder body = new StringBuilder();
            services.getOrDefault(query(exchange).get("service"), Map.of())
                    .forEach((address, weight) -> body.append(address).append(' ').append(weight).append('\n'));
            send(exchange, 200, body.toString());
        });
        // Like the real control plane: an operator token in its data dir, and join tokens for it (any body will do:
        // the stand-in sidecar ignores --token-file and --mtls).
        String dataDir = options.get("--data-dir");
        if (dataDir != null) {
            java.nio.file.Files.createDirectories(java.nio.file.Path.of(dataDir));
            java.nio.file.Files.writeString(java.nio.file.Path.of(dataDir, "admin.token"), "fake-operator-token\n");
        }
        server.createContext("/v1/tokens", exchange -> send(exchange, 200, "{\"token\":\"fake-join-token\",\"id\":\"f1\","
                + "\"service\":\"any\",\"expiresAt\":\"2099-01-01T00:00:00Z\",\"singleUse\":false}"));
        server.start();
        System.out.println("weft control listening on 127.0.0.1:" + server.getAddress().getPort());
    }

    private static void sidecar(Map<String, String> options) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String app = options.get("--app");
        URI registry = URI.create(options.get("--registry").replace("weft://", "http://"));
        awaitHealthy(client, URI.create("http://" + app + "/health"));

        HttpServer inbound = server(options.get("--inbound"));
        inbound.createContext("/", exchange -> forward(client, exchange, app));
        inbound.start();

        List<String[]> endpoints = new ArrayList<>();
        String upstream = options.get("--upstream");
        if (upstream != null) {
            String[] nameAndAddress = upstream.split("=", 2);
            HttpServer outbound = server(nameAndAddress[1]);
            outbound.createContext("/", exchange -> forward(client, exchange, pick(endpoints)));
            outbound.start();
            Thread.ofVirtual().start(() -> refresh(client, registry, nameAndAddress[0], endpoints));
        } else {
            client.send(HttpRequest.newBuilder(registry.resolve("/register?service=" + options.get("--service")
                    + "&address=" + options.get("--inbound") + "&weight=" + options.get("--weight"))).build(),
                    HttpResponse.BodyHandlers.discarding());
        }

        HttpServer admin = server(options.get("--admin"));
        admin.createContext("/ready", exchange -> {
            boolean ready;
            synchronized (endpoints) {
                ready = upstream == null || !endpoints.isEmpty();
            }
            send(exchange, ready ? 200 : 503, ready ? "ready" : "no endpoints yet");
        });
        admin.start();
    }

    private static void refresh(HttpClient client, URI registry, String service, List<String[]> endpoints) {
        while (true) {
            try {
                String body = client.send(HttpRequest.newBuilder(registry.resolve("/endpoints?service=" + service))
                        .build(), HttpResponse.BodyHandlers.ofString()).body();
                List<String[]> fresh = body.lines().map(l -> l.split(" ")).toList();
                synchronized (endpoints) {
                    endpoints.clear();
                    endpoints.addAll(fresh);
                }
                Thread.sleep(500);
            } catch (Exception e) {
                return;
            }
        }
    }

    private static String pick(List<String[]> endpoints) {
        synchronized (endpoints) {
            int total = endpoints.stream().mapToInt(e -> Integer.parseInt(e[1])).sum();
            int r = ThreadLocalRandom.current().nextInt(total);
            for (String[] e : endpoints) {
                r -= Integer.parseInt(e[1]);
                if (r < 0) {
                    return e[0];
                }
            }
            throw new IllegalStateException("unreachable");
        }
    }

    private static void forward(HttpClient client, HttpExchange exchange, String target) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        try {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(
                            URI.create("http://" + target + exchange.getRequestURI()))
                    .timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            response.headers().firstValue("x-provider")
                    .ifPresent(p -> exchange.getResponseHeaders().set("x-provider", p));
            send(exchange, response.statusCode(), response.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            send(exchange, 502, "fake sidecar interrupted");
        } catch (IOException e) {
            send(exchange, 502, "fake sidecar: " + e);
        }
    }

    private static void awaitHealthy(HttpClient client, URI health) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            try {
                if (client.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // The app may still be starting.
            }
            Thread.sleep(100);
        }
        System.err.println("fake sidecar: app " + health + " is not healthy");
        System.exit(1);
    }

    private static HttpServer server(String hostPort) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        HttpServer server = HttpServer.create(new InetSocketAddress(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1))), 1024);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        return server;
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static Map<String, String> query(HttpExchange exchange) {
        Map<String, String> q = new HashMap<>();
        String raw = exchange.getRequestURI().getRawQuery();
        for (String pair : raw == null ? new String[0] : raw.split("&")) {
            String[] kv = pair.split("=", 2);
            q.put(kv[0], kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
        }
        return q;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        return options;
    }
}
