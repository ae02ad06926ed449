package dev.weft.control.ca;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.cli.DurationConverter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ./weft token create --service NAME [--ttl 1h] [--single-use]}: asks the running control plane for a join token
 * and prints it alone on stdout, so {@code ./weft token create --service provider > provider.token} makes the file a
 * sidecar's {@code --token-file} reads. What it is for and until when goes to stderr.
 *
 * <p>The demo and the bench call {@link #create} to make theirs. Thread: the caller's; the call blocks up to 5 s.
 */
@Command(name = "token", mixinStandardHelpOptions = true, subcommands = TokenCommand.Create.class,
        description = "Join tokens: what a sidecar shows the control plane (--token-file) to get its certificate.")
public final class TokenCommand implements Runnable {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = "Makes a join token for one service and prints it on stdout.")
    public static final class Create implements Callable<Integer> {
        @Option(names = "--service", required = true, paramLabel = "NAME",
                description = "The service the token is for; a sidecar of another service cannot use it.")
        String service;

        @Option(names = "--ttl", defaultValue = "1h", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How long the token can be used (default: ${DEFAULT-VALUE}); a sidecar needs it at each"
                        + " start, and renews its certificate without it.")
        Duration ttl;

        @Option(names = "--single-use", description = "Good for one certificate only (default: any number of the"
                + " service's sidecars until it expires).")
        boolean singleUse;

        /** The control plane, and the operator token that token creation needs (docs/security.md). */
        @picocli.CommandLine.Mixin
        dev.weft.registry.cli.ControlPlaneOptions control;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            try {
                Created created = create(control.url(), control.authorization(), service, ttl, singleUse);
                JoinToken t = created.token();
                // The pin goes to stderr with the rest: stdout stays the token alone, for > FILE.
                spec.commandLine().getErr().println("weft token: " + t + (created.caPin() == null ? ""
                        : "; a sidecar joining over TLS trusts the control plane with --control-ca-pin "
                        + created.caPin()));
                spec.commandLine().getOut().println(t.token());
                spec.commandLine().getOut().flush();
                return 0;
            } catch (IOException | IllegalArgumentException e) {
                spec.commandLine().getErr().println("weft token: " + e.getMessage());
                return 1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 1;
            }
        }
    }

    /**
     * Asks the control plane at {@code registryUrl} ({@code weft://HOST:PORT}) for a join token; what the demo and the
     * bench call before starting a sidecar with {@code --token-file}.
     *
     * @throws IOException naming the control plane and its answer, if it could not be reached or refused
     */
    public static JoinToken create(String registryUrl, String service, Duration ttl, boolean singleUse)
            throws IOException, InterruptedException {
        return create(registryUrl, new dev.weft.registry.cli.ControlPlaneOptions(registryUrl, null).authorization(),
                service, ttl, singleUse).token();
    }

    /**
     * As {@link #create(String, String, Duration, boolean)}, with the operator token in {@code adminTokenFile}: the
     * {@code DATA_DIR/admin.token} of a control plane the caller started with its own data dir.
     */
    public static JoinToken create(String registryUrl, Path adminTokenFile, String service, Duration ttl,
                                   boolean singleUse) throws IOException, InterruptedException {
        return create(registryUrl, new dev.weft.registry.cli.ControlPlaneOptions(registryUrl, adminTokenFile)
                .authorization(), service, ttl, singleUse).token();
    }

    /** A token, and the pin of the CA that made it ({@code caPin} of the answer; null from an older control plane). */
    private record Created(JoinToken token, String caPin) {}

    private static Created create(String registryUrl, String authorization, String service, Duration ttl,
                                    boolean singleUse) throws IOException, InterruptedException {
        dev.weft.registry.weft.ControlPlaneUrl url = controlPlane(registryUrl);
        URI base = URI.create(url.httpBase());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("service", service);
        body.put("ttlMillis", ttl.toMillis());
        body.put("singleUse", singleUse);
        HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve("/v1/tokens")).timeout(Duration.ofSeconds(5))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
        if (authorization != null) {
            builder.header("Authorization", authorization);
        }
        HttpRequest request = builder.build();
        HttpResponse<String> response;
        try (HttpClient http = url.tls() ? dev.weft.control.cli.Http.tlsClient(url.trust())
                : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IOException("cannot reach the control plane at " + registryUrl + ": " + e.getMessage()
                    + " (is ./weft control running there?)", e);
        }
        JsonNode answer = JSON.readTree(response.body());
        if (response.statusCode() != 200) {
            throw new IOException("the control plane at " + registryUrl + " refused: " + response.statusCode() + " "
                    + answer.path("error").asText(response.body()) + (response.statusCode() == 401
                    || response.statusCode() == 403 ? (authorization == null ? " (no operator token sent: pass"
                    + " --admin-token-file, the control plane's DATA_DIR/admin.token)" : " (sent the operator token"
                    + " given)") : ""));
        }
        return new Created(new JoinToken(answer.path("token").asText(), answer.path("id").asText(),
                answer.path("service").asText(), Instant.parse(answer.path("expiresAt").asText()),
                answer.path("singleUse").asBoolean()), answer.hasNonNull("caPin") ? answer.get("caPin").asText() : null);
    }

    private static dev.weft.registry.weft.ControlPlaneUrl controlPlane(String registryUrl) {
        if (!dev.weft.registry.weft.ControlPlaneUrl.isControlPlane(registryUrl)) {
            throw new IllegalArgumentException("invalid --registry '" + registryUrl + "' (expected the control"
                    + " plane's weft://HOST:PORT or weft+tls://HOST:PORT: it is the certificate authority; etcd:// has"
                    + " none)");
        }
        return dev.weft.registry.weft.ControlPlaneUrl.parse(registryUrl);
    }
}
