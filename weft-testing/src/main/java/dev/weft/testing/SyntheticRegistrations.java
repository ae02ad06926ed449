package dev.weft.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fills a control plane with registrations that no sidecar stands behind, through its real HTTP API, to test what
 * the operator sees at scale (the dashboard with 200 services and 2,000 endpoints): one lease, then
 * {@code services × perService} endpoints named {@code svc-NNN} and {@code svc-NNN-I}, 64 requests in flight at most.
 */
public final class SyntheticRegistrations {
    private static final Pattern LEASE = Pattern.compile("\"leaseId\"\\s*:\\s*\"([^\"]+)\"");

    private SyntheticRegistrations() {}

    /**
     * @param base          the control plane, {@code http://HOST:PORT}; the lease lives {@code ttl} without keep-alives
     * @param operatorToken the control plane's operator token (its {@code DATA_DIR/admin.token}): registrations of
     *                      services no sidecar stands behind need the operator's credentials
     */
    public static void register(String base, String operatorToken, int services, int perService, Duration ttl)
            throws IOException, InterruptedException {
        String authorization = "Bearer " + operatorToken;
        try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            String lease = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/leases"))
                    .header("Authorization", authorization)
                    .PUT(HttpRequest.BodyPublishers.ofString("{\"ttlMillis\": " + ttl.toMillis() + "}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Matcher m = LEASE.matcher(lease);
            if (!m.find()) {
                throw new IOException("no lease granted: " + lease);
            }
            List<CompletableFuture<HttpResponse<String>>> puts = new ArrayList<>();
            for (int s = 0; s < services; s++) {
                for (int i = 0; i < perService; i++) {
                    String service = String.format("svc-%03d", s);
                    puts.add(http.sendAsync(HttpRequest.newBuilder(URI.create(base + "/v1/services/" + service
                            + "/endpoints/" + service + "-" + i)).header("Authorization", authorization)
                            .PUT(HttpRequest.BodyPublishers.ofString(
                            "{\"host\": \"127.0.0.1\", \"port\": " + (10000 + s * perService + i) + ", \"leaseId\": \""
                                    + m.group(1) + "\"}")).build(), HttpResponse.BodyHandlers.ofString()));
                    if (puts.size() >= 64) {
                        check(puts);
                    }
                }
            }
            check(puts);
        }
    }

    private static void check(List<CompletableFuture<HttpResponse<String>>> puts) throws IOException {
        for (CompletableFuture<HttpResponse<String>> f : puts) {
            HttpResponse<String> r = f.join();
            if (r.statusCode() != 200) {
                throw new IOException(r.uri() + " answered " + r.statusCode() + ": " + r.body());
            }
        }
        puts.clear();
    }
}
