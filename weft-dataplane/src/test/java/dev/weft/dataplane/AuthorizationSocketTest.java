package dev.weft.dataplane;

import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.observe.ObservabilityConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Authorization end to end over real sockets: the embedded control plane, real sidecars for a provider and two
 * callers (web and consumer), the policy stored by the real {@code ./weft apply} command, and requests from each
 * caller's app through its sidecar, the mesh and the provider's sidecar to the provider's app.
 */
class AuthorizationSocketTest {
    private static final String NO_ADMIN_FROM_WEB = """
            services:
              provider:
                authorization:
                  rules:
                    - name: no-admin-from-web
                      action: deny
                      from: [web]
                      paths: [/admin]
                      methods: [POST]
            """;

    /** One answer a caller's app got: when its request was sent, and what came back. */
    record Outcome(long sentNanos, int status, String error, String body) {}

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private Outcome post(int port, String path) {
        long sent = System.nanoTime();
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("order")).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Outcome(sent, r.statusCode(), r.headers().firstValue("x-weft-error").orElse(null), r.body());
        } catch (Exception e) {
            return new Outcome(sent, -1, e.toString(), "");
        }
    }

    private static int apply(Path dir, MeshFixture mesh, String name, String yaml, PrintStream err) throws Exception {
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, yaml);
        CommandLine cli = new CommandLine(new ApplyCommand());
        PrintStream saved = System.err;
        System.setErr(err);
        try {
            return cli.execute("-f", file.toString(), "--registry", mesh.registryUrl(),
                    "--admin-token-file", mesh.adminTokenFile().toString());
        } finally {
            System.setErr(saved);
        }
    }

    private static Sidecar caller(MeshFixture mesh, String service, TestApp app) throws Exception {
        return mesh.sidecar(service, service + "-1", app.address(),
                Map.of("provider", new InetSocketAddress("127.0.0.1", 0)), false, 1, 0);
    }

    private String admin(Sidecar s, String path) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + MeshFixture.port(s, "admin") + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.statusCode() + " " + r.body();
    }

    /**
     * A denial that comes back before the client has sent its whole body: the client reads its 403, sends the rest
     * of the body, and its connection carries the next request. The caller's sidecar used to close the connection
     * with the body's bytes unread, and the kernel's reset could take the 403 with it (seen once in a full run).
     */
    @Test
    void aDenialBeforeTheBodyEndedKeepsTheClientsConnectionAndItsNextRequest(@TempDir Path dir) throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp webApp = new TestApp()) {
            mesh.provider("provider", "p1", app.address(), 1, 0);
            int webPort = MeshFixture.port(caller(mesh, "web", webApp), "upstream provider");
            assertThat(apply(dir, mesh, "authz", NO_ADMIN_FROM_WEB, System.err)).isZero();
            await().atMost(Duration.ofSeconds(5)).until(() -> post(webPort, "/admin/users").status() == 403);
            int servedBefore = app.servedByCaller.getOrDefault("web", new AtomicInteger()).get();

            try (Socket s = new Socket("127.0.0.1", webPort)) {
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(),
                        StandardCharsets.ISO_8859_1));
                out.write(("POST /admin/users HTTP/1.1\r\nHost: provider\r\nContent-Length: 20\r\n\r\n12345")
                        .getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                assertThat(in.readLine()).startsWith("HTTP/1.1 403");
                long length = skipHead(in);
                in.skip(length);
                // The rest of the body, then a request the rule allows, on the same connection.
                out.write(("678901234567890" + "GET /orders HTTP/1.1\r\nHost: provider\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                assertThat(in.readLine()).startsWith("HTTP/1.1 200");
            }
            assertThat(app.servedByCaller.get("web").get()).as("the denied POST never reached the app; the GET did")
                    .isEqualTo(servedBefore + 1);
        }
    }

    /** Reads an answer's head up to its empty line; returns its Content-Length. */
    private static long skipHead(BufferedReader in) throws java.io.IOException {
        long length = 0;
        for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Long.parseLong(line.substring(15).strip());
            }
        }
        return length;
    }

    @Test
    void aDenyRuleAppliedUnderLoadStopsOneCallerWithinASecondWhileTheOtherHasNoFailure(@TempDir Path dir)
            throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp webApp = new TestApp(); TestApp consumerApp = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 0);
            int webPort = MeshFixture.port(caller(mesh, "web", webApp), "upstream provider");
            int consumerPort = MeshFixture.port(caller(mesh, "consumer", consumerApp), "upstream provider");

            AtomicBoolean running = new AtomicBoolean(true);
            List<Outcome> web = Collections.synchronizedList(new ArrayList<>());
            List<Outcome> consumer = Collections.synchronizedList(new ArrayList<>());
            List<Thread> load = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                load.add(Thread.ofVirtual().start(() -> {
                    while (running.get()) {
                        web.add(post(webPort, "/admin/users"));
                    }
                }));
                load.add(Thread.ofVirtual().start(() -> {
                    while (running.get()) {
                        consumer.add(post(consumerPort, "/admin/users"));
                    }
                }));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> web.size() > 50 && consumer.size() > 50);

            long applyStart = System.nanoTime();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertThat(apply(dir, mesh, "authz", NO_ADMIN_FROM_WEB, new PrintStream(err, true))).as(err.toString())
                    .isZero();
            long applied = System.nanoTime();
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(() -> {
                synchronized (web) { // the load threads add to it meanwhile
                    return web.stream().anyMatch(o -> o.status() == 403);
                }
            });
            Thread.sleep(1000); // load goes on under the new rule
            running.set(false);
            for (Thread t : load) {
                t.join(Duration.ofSeconds(15));
            }

            // The other caller: every request succeeded, before, during and after the change.
            List<Outcome> consumerFailed = consumer.stream().filter(o -> o.status() != 200).toList();
            assertThat(consumerFailed).as("consumer's failures of " + consumer.size()).isEmpty();

            // The denied caller: 200 until the rule, then 403 for every request sent from the moment it took effect.
            List<Outcome> ordered = new ArrayList<>(web);
            ordered.sort((a, b) -> Long.compare(a.sentNanos(), b.sentNanos()));
            assertThat(ordered).allMatch(o -> o.status() == 200 || o.status() == 403, "only 200 or 403");
            long lastAllowed = ordered.stream().filter(o -> o.status() == 200).mapToLong(Outcome::sentNanos).max()
                    .orElseThrow();
            List<Outcome> after = ordered.stream().filter(o -> o.sentNanos() > lastAllowed).toList();
            assertThat(after).isNotEmpty().allMatch(o -> o.status() == 403);
            // (A request sent just before the last allowed one may have reached the provider after the change.)
            List<Outcome> denied = ordered.stream().filter(o -> o.status() == 403).toList();
            assertThat(denied).allMatch(o -> "forbidden".equals(o.error())
                    && o.body().equals("forbidden by rule no-admin-from-web\n"));
            long inForceMillis = (lastAllowed - applyStart) / 1_000_000;
            long afterStoredMillis = (lastAllowed - applied) / 1_000_000;
            System.out.printf("authz: rule in force %d ms after apply started, %d ms after it returned (apply took %d "
                            + "ms); web %d requests (%d denied), consumer %d requests, 0 failed%n", inForceMillis,
                    afterStoredMillis, (applied - applyStart) / 1_000_000, web.size(), denied.size(), consumer.size());
            // The bound, counted as PolicyPushTest counts it: from the moment the document is stored (when
            // ./weft apply returns; the command's own start-up is not the mesh's delay).
            assertThat(afterStoredMillis).as("in force within a second of ./weft apply storing the rule")
                    .isLessThan(1000);

            // Counted at the provider's sidecar, once per denial; the app saw only what was allowed.
            assertThat(admin(provider, "/metrics")).contains("weft_authz_denied_total{rule=\"no-admin-from-web\"} "
                    + denied.size() + "\n");
            assertThat(app.servedByCaller.get("web").get()).isEqualTo(web.size() - denied.size());
            assertThat(app.servedByCaller.get("consumer").get()).isEqualTo(consumer.size());
            assertThat(admin(provider, "/config")).contains("no-admin-from-web: deny from [web] paths [/admin] methods [POST]");
        }
    }

    @Test
    void aDocumentWithABadAuthorizationSectionIsRefusedByApplyWithTheReason(@TempDir Path dir) throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop")) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = apply(dir, mesh, "bad", NO_ADMIN_FROM_WEB.replace("action: deny", "action: block"),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            assertThat(code).isEqualTo(2);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("weft apply: refused: ")
                    .contains("bad.yaml:6: key 'services.provider.authorization.rules[0].action': expected allow or "
                            + "deny (got 'block')");
        }
    }

    @Test
    void theAdminPortsProbesAreNeverSubjectToAuthorization(@TempDir Path dir) throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp();
             TestApp webApp = new TestApp()) {
            Path accessLog = dir.resolve("inbound.jsonl");
            mesh.observability = ObservabilityConfig.defaults().withAccessLog(ExchangeObserver.Direction.INBOUND,
                    accessLog.toString());
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 0);
            mesh.observability = ObservabilityConfig.defaults();
            int webPort = MeshFixture.port(caller(mesh, "web", webApp), "upstream provider");
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertThat(apply(dir, mesh, "deny-all", """
                    services:
                      provider:
                        authorization: {default: deny}
                    """, new PrintStream(err, true))).as(err.toString()).isZero();
            await().atMost(Duration.ofSeconds(2)).until(() -> post(webPort, "/orders").status() == 403);
            Outcome denied = post(webPort, "/orders");
            assertThat(denied.error()).isEqualTo("forbidden");
            assertThat(denied.body()).startsWith("forbidden by rule default");

            // Nothing reaches the app through the mesh now, yet the sidecar's own probes answer, and its health
            // check of the app (which goes to the app directly, not through the inbound stack) keeps it ready.
            assertThat(admin(provider, "/live")).startsWith("200");
            assertThat(admin(provider, "/ready")).startsWith("200");
            assertThat(admin(provider, "/metrics")).startsWith("200").contains("weft_authz_denied_total{rule=\"default\"}");
            assertThat(provider.isReady()).isTrue();
            assertThat(app.servedByCaller.get("web")).isNull();
            // The provider's access log has the denial, as every refusal of the mesh: its status and error kind.
            await().atMost(Duration.ofSeconds(5)).until(() -> Files.exists(accessLog)
                    && Files.readString(accessLog).contains("\"status\":403,\"error\":\"forbidden\""));
        }
    }
}
