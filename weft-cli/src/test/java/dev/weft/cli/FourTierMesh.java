package dev.weft.cli;

import dev.weft.examples.ConsumerServer;
import dev.weft.examples.HostPort;
import dev.weft.examples.ProviderServer;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * entry → a → b → c, with two instances of c: a control plane and five sidecars, each its own JVM ({@link ChildJvm}),
 * and the apps on real sockets in the test's JVM: the example consumer as the relay of entry, a and b (it passes the
 * trace context on, so each request makes one linked trace), the example provider as c (20 ms, fault injection).
 *
 * <p>Capacities: c's instances take 2 requests each (4 together) and b's sidecar queues for them (its outbound limit
 * to c is off by policy); a takes 6, so the entry's sidecar sheds beyond 6 in flight (its outbound limit to a).
 */
final class FourTierMesh implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(60);

    final List<ChildJvm> children = new ArrayList<>();
    final List<AutoCloseable> apps = new ArrayList<>();
    private final List<HeldPort> heldPorts = new ArrayList<>();
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .executor(Executors.newVirtualThreadPerTaskExecutor()).connectTimeout(Duration.ofSeconds(5)).build();
    String control;
    ProviderServer c1;
    ProviderServer c2;
    ConsumerServer b;
    ConsumerServer entry;
    /** c-1's sidecar's inbound address: what the callers' spans name as its endpoint. */
    String c1Endpoint;

    FourTierMesh(Path dir) throws Exception {
        try {
            start(dir);
        } catch (Exception | AssertionError e) {
            close();
            throw e;
        }
    }

    private void start(Path dir) throws Exception {
        ChildJvm controlJvm = ChildJvm.start("control", dir, "control", "--listen", "127.0.0.1:0", "--data-dir",
                dir.resolve("control").toString());
        children.add(controlJvm);
        String port = controlJvm.awaitLine("listening on [^:]+:(\\d+)", WAIT);
        control = "http://127.0.0.1:" + port;
        String registry = "weft://127.0.0.1:" + port;
        // b queues for c when c's instances are full (instead of the default: 503 outbound-limit at once).
        HttpResponse<String> put = http.send(HttpRequest.newBuilder(URI.create(control + "/v1/policies/diagnose-test"))
                .header("Authorization", "Bearer " + dev.weft.registry.auth.ControlCredentials.readToken(
                        dir.resolve("control").resolve(dev.weft.control.ca.AdminToken.FILE)))
                .PUT(HttpRequest.BodyPublishers.ofString("services:\n  c:\n    outbound-limit: {adaptive: false}\n"))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (put.statusCode() != 200) {
            throw new AssertionError("policy not stored: " + put.statusCode() + " " + put.body());
        }

        c1 = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "c-1", 200,
                Duration.ofMillis(20), 1));
        apps.add(c1);
        c2 = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "c-2", 200,
                Duration.ofMillis(20), 1));
        apps.add(c2);
        // Each relay is told its sidecar's upstream port before that sidecar (a child) starts: the ports are held
        // until the mesh closes, so nothing else can be given one before the sidecar binds it (Netty allows that).
        int bUp = held();
        int aUp = held();
        int entryUp = held();
        b = relay(bUp);
        ConsumerServer a = relay(aUp);
        entry = relay(entryUp);

        ChildJvm sc1 = sidecar(dir, "c", "c-1", c1.address().getPort(), registry, "--capacity", "2");
        ChildJvm sc2 = sidecar(dir, "c", "c-2", c2.address().getPort(), registry, "--capacity", "2");
        // The default balancer (p2c-peak-ewma) at b avoids a slow instance, but with two slots at each instance and
        // three callers, the slow one still gets a request whenever the other is full: enough to show in each window.
        ChildJvm sb = sidecar(dir, "b", "b-1", b.address().getPort(), registry, "--upstream", "c=127.0.0.1:" + bUp);
        ChildJvm sa = sidecar(dir, "a", "a-1", a.address().getPort(), registry, "--upstream", "b=127.0.0.1:" + aUp,
                "--capacity", "6");
        ChildJvm se = sidecar(dir, "entry", "entry-1", entry.address().getPort(), registry, "--upstream",
                "a=127.0.0.1:" + entryUp);
        c1Endpoint = "127.0.0.1:" + sc1.awaitLine("inbound=[^:]+:(\\d+)", WAIT);
        for (ChildJvm c : List.of(sc2, sb, sa, se)) {
            c.awaitLine("(started)", WAIT);
        }
        awaitBothInstancesServe();
    }

    /** A held port (see {@link HeldPort}), let go when the mesh closes. */
    private int held() throws IOException {
        HeldPort p = LoopbackPorts.held();
        heldPorts.add(p);
        return p.port();
    }

    private ConsumerServer relay(int nextHop) throws InterruptedException {
        ConsumerServer s = ConsumerServer.start(new ConsumerServer.Settings(new HostPort("127.0.0.1", 0),
                URI.create("http://127.0.0.1:" + nextHop), 64, Duration.ofSeconds(20), 1));
        apps.add(s);
        return s;
    }

    private ChildJvm sidecar(Path dir, String service, String id, int app, String registry, String... more)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("sidecar", "--service", service, "--id", id, "--app",
                "127.0.0.1:" + app, "--registry", registry, "--workers", "1",
                "--token-file", ChildJvm.tokenFile(dir, registry, service).toString(), "--mtls", "off",
                // The diagnosis and the map read every trace: sample them all, whatever the default.
                "--trace-sample", "1.0"));
        args.addAll(List.of(more));
        ChildJvm c = ChildJvm.start("sidecar-" + id, dir, args.toArray(String[]::new));
        children.add(c);
        return c;
    }

    /** Until a call through the entry has been answered by each instance of c (x-provider names it). */
    private void awaitBothInstancesServe() throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Set<String> seen = new HashSet<>();
        while (seen.size() < 2) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("both instances of c never answered through the entry; saw " + seen);
            }
            try {
                HttpResponse<String> r = call();
                if (r.statusCode() == 200) {
                    r.headers().firstValue("x-provider").ifPresent(seen::add);
                } else {
                    Thread.sleep(100);
                }
            } catch (IOException e) {
                Thread.sleep(100);
            }
        }
    }

    HttpResponse<String> call() throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + HostPort.of(entry.address()) + "/"))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** {@code POST /fault?QUERY} on an example app. */
    void fault(java.net.InetSocketAddress app, String query) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + HostPort.of(app) + "/fault?"
                + query)).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError("fault " + query + " refused: " + r.statusCode() + " " + r.body());
        }
    }

    @Override
    public void close() throws Exception {
        http.shutdownNow();
        AssertionError failure = null;
        for (int i = children.size() - 1; i >= 0; i--) {
            try {
                children.get(i).close();
            } catch (AssertionError e) {
                failure = e;
            }
        }
        for (AutoCloseable app : apps) {
            app.close();
        }
        for (HeldPort p : heldPorts) {
            p.close();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
