package dev.weft.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.cli.DiagnoseCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 14's culprit-finding scenarios on a real four-tier mesh ({@link FourTierMesh}): each fault is injected under a
 * steady load, and {@code GET /v1/diagnose} is asked once a second until it names the cause. Between scenarios the
 * fault is cleared and the load runs steady for longer than a diagnosis's window, baseline and settling delay, so each
 * scenario's baseline is quiet. Windows are shorter than the defaults to keep the test short (a 4 s window against
 * the 5 s before it): at about 80 traces a second a 5 s baseline still holds hundreds of traces, c-1 alone over a
 * hundred, far above the 5 a unit needs. What {@code ./weft diagnose} printed for each is saved under
 * {@code target/diagnose/} (docs/observability.md). In the first three, the dashboard's map is checked in headless
 * Chromium to mark the same culprit (culprit.mjs).
 *
 * <p>Every span counts here, so the sidecars sample every trace ({@code --trace-sample 1.0} in {@link FourTierMesh}),
 * whatever the default.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DiagnoseScenariosTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String WINDOW = "4s";
    private static final String BASELINE = "5s";
    /**
     * Longer than window + baseline + the diagnosis's settling delay (2 s, DiagnoseApi.SETTLE): the next scenario's
     * baseline holds none of the previous fault, and the first one's holds only the steady load. A wait for time to
     * pass, not for a condition: what it waits for is that the spans of the fault age out of the ranges diagnosed.
     */
    private static final Duration QUIET = Duration.ofSeconds(12);
    private static final int STEADY_CALLERS = 3;

    private FourTierMesh mesh;
    private final List<Load> loads = new ArrayList<>();
    /** When the load last became steady (started, or a scenario's fault cleared): System.nanoTime(). */
    private long steadySince;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        mesh = new FourTierMesh(dir);
        loads.add(new Load(STEADY_CALLERS, 0));
        steadySince = System.nanoTime();
    }

    /** Each scenario starts after {@link #QUIET} of steady load (none is needed after the last one). */
    @BeforeEach
    void quiet() throws InterruptedException {
        long left = QUIET.toNanos() - (System.nanoTime() - steadySince);
        if (left > 0) {
            Thread.sleep(Duration.ofNanos(left));
        }
    }

    /** Each scenario's fault is cleared in its own finally; the steady load runs on from here, whatever the outcome. */
    @AfterEach
    void faultCleared() {
        steadySince = System.nanoTime();
    }

    @AfterAll
    void stop() throws Exception {
        loads.forEach(Load::stop);
        if (mesh != null) {
            mesh.close();
        }
    }

    @Test
    @Order(1)
    void oneInstanceOfCTenTimesSlowerIsNamedWithinTenSeconds() throws Exception {
        mesh.fault(mesh.c1.address(), "factor=10");
        long injected = System.nanoTime();
        try {
            JsonNode d = awaitDiagnosis("slow-instance", Duration.ofSeconds(10), x -> {
                JsonNode top = x.path("culprits").path(0);
                return top.path("service").asText().equals("c") && top.path("endpoint").asText().equals(mesh.c1Endpoint);
            });
            long seconds = (System.nanoTime() - injected) / 1_000_000_000L;
            assertThat(seconds).as("named within 10 s of the fault").isLessThanOrEqualTo(10);
            JsonNode top = d.path("culprits").path(0);
            assertThat(top.path("kind").asText()).isEqualTo("latency");
            assertThat(top.path("selfTimeNowMs").asDouble()).isGreaterThan(3 * top.path("selfTimeBeforeMs").asDouble());
            assertThat(top.path("traceIds").size()).isPositive();
            assertThat(d.path("verdict").asText()).startsWith("c endpoint " + mesh.c1Endpoint + " (c-1) is ")
                    .contains("slower in its own time");
            // The dashboard's map marks it too (headless Chromium; it asks for the default window).
            awaitMapsDiagnosis("c");
            assertThat(BrowserScript.run("culprit.mjs", mesh.control, "c")).contains("culprit: c marked");
        } finally {
            mesh.fault(mesh.c1.address(), "factor=1");
        }
    }

    @Test
    @Order(2)
    void cSlowEnoughForBToQueueNamesCAndMarksBAsBackPressure() throws Exception {
        mesh.fault(mesh.c1.address(), "factor=10");
        mesh.fault(mesh.c2.address(), "factor=10");
        // Six callers against c's four slots: b's sidecar queues for them.
        Load more = new Load(3, 0);
        try {
            JsonNode d = awaitDiagnosis("back-pressure", Duration.ofSeconds(20), x -> {
                JsonNode top = x.path("culprits").path(0);
                boolean bQueues = false;
                for (JsonNode b : x.path("backPressure")) {
                    bQueues |= b.path("service").asText().equals("b") && b.path("waitingOn").asText().equals("c");
                }
                return top.path("service").asText().equals("c") && bQueues;
            });
            for (JsonNode c : d.path("culprits")) {
                assertThat(c.path("service").asText()).as("only c is a cause: %s", d).isEqualTo("c");
            }
            assertThat(d.path("verdict").asText()).contains("b queues for c (back-pressure, not a cause)");
            awaitMapsDiagnosis("c", "b");
            assertThat(BrowserScript.run("culprit.mjs", mesh.control, "c", "b"))
                    .contains("culprit: c marked, back-pressure: b");
        } finally {
            more.stop();
            mesh.fault(mesh.c1.address(), "factor=1");
            mesh.fault(mesh.c2.address(), "factor=1");
        }
    }

    @Test
    @Order(3)
    void bAnsweringTwentyPercentErrorsIsNamed() throws Exception {
        mesh.fault(mesh.b.address(), "error-rate=0.2");
        try {
            JsonNode d = awaitDiagnosis("errors", Duration.ofSeconds(15), x -> {
                JsonNode top = x.path("culprits").path(0);
                // Named at once; waited for until the window holds only the faulty period, for a true rate.
                return top.path("service").asText().equals("b") && top.path("kind").asText().equals("errors")
                        && top.path("errorRate").asDouble() >= 0.1;
            });
            JsonNode top = d.path("culprits").path(0);
            assertThat(top.path("errorKinds").path("500").asLong()).isPositive();
            assertThat(top.path("errorRate").asDouble()).isBetween(0.1, 0.3);
            for (JsonNode c : d.path("culprits")) {
                assertThat(c.path("service").asText()).as("a and entry only pass b's errors back: %s", d).isEqualTo("b");
            }
            assertThat(d.path("verdict").asText()).startsWith("b originates ");
            awaitMapsDiagnosis("b");
            assertThat(BrowserScript.run("culprit.mjs", mesh.control, "b")).contains("culprit: b marked");
        } finally {
            mesh.fault(mesh.b.address(), "error-rate=0");
        }
    }

    @Test
    @Order(4)
    void aBurstAtTheEntryWithNothingSlowNamesNoServiceAndSaysTheEntryIsOverItsLimit() throws Exception {
        // Twelve more callers, 20 ms apart: most are refused at once, about 500 calls a second. The callers share this
        // JVM with the relays; a heavier burst (24 callers, 10 ms apart) took enough CPU from them that their own
        // time grew 2-13x for seconds, which the analysis then rightly reported.
        Load burst = new Load(12, 20);
        try {
            JsonNode d = awaitDiagnosis("burst", Duration.ofSeconds(15), x -> {
                boolean entry = false;
                for (JsonNode o : x.path("overloaded")) {
                    entry |= o.path("service").asText().equals("entry");
                }
                return entry;
            });
            assertThat(d.path("culprits").size()).as("no service named: %s", d).isZero();
            assertThat(d.path("healthy").asBoolean()).isFalse();
            assertThat(d.path("overloaded").path(0).path("service").asText()).isEqualTo("entry");
            assertThat(d.path("overloaded").path(0).path("reason").asText()).contains("outbound-limit");
            assertThat(d.path("verdict").asText()).startsWith("no culprit: no service's own time grew; entry is over its limit");
        } finally {
            burst.stop();
        }
    }

    /**
     * Asks {@code /v1/diagnose} once a second until {@code named} holds (fails after {@code within}), then saves what
     * {@code ./weft diagnose} prints at that moment.
     */
    private JsonNode awaitDiagnosis(String scenario, Duration within, Predicate<JsonNode> named) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            long asked = System.nanoTime();
            HttpResponse<String> r = mesh.http.send(HttpRequest.newBuilder(URI.create(mesh.control
                    + "/v1/diagnose?window=" + WINDOW + "&baseline=" + BASELINE)).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            last = JSON.readTree(r.body());
            System.out.printf("[%s] diagnosis answered in %d ms: %s%n", scenario, (System.nanoTime() - asked) / 1_000_000,
                    last.path("verdict").asText());
            if (named.test(last)) {
                save(scenario, r.body());
                return last;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError(scenario + ": not named within " + within + "; last diagnosis: " + last);
    }

    /**
     * Waits (up to 40 s, as culprit.mjs does for each mark) until the diagnosis the dashboard's map asks for (the
     * default window and baseline) names {@code culprit} and shows each of {@code backPressure} queueing, so that the
     * map marks them at its first request: it asks again only every 15 s, and an answer a moment too early cost each
     * scenario up to 15 s. Asserts nothing itself: the browser script, run next, judges what the map shows.
     */
    private void awaitMapsDiagnosis(String culprit, String... backPressure) throws Exception {
        if (!BrowserScript.available()) {
            return;
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = mesh.http.send(HttpRequest.newBuilder(URI.create(mesh.control + "/v1/diagnose"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                JsonNode d = JSON.readTree(r.body());
                List<String> culprits = new ArrayList<>();
                d.path("culprits").forEach(c -> culprits.add(c.path("service").asText()));
                List<String> queueing = new ArrayList<>();
                d.path("backPressure").forEach(b -> queueing.add(b.path("service").asText()));
                // As the map draws them: a service that is a culprit is marked as one, not as back-pressure.
                if (culprits.contains(culprit) && queueing.containsAll(List.of(backPressure))
                        && java.util.Collections.disjoint(culprits, List.of(backPressure))) {
                    return;
                }
            }
            Thread.sleep(1000);
        }
    }

    /**
     * Keeps, for the docs, the answer that named the cause as {@code ./weft diagnose} prints it, and runs the command
     * as a user would (its own request, a moment later: the answer may have moved on).
     */
    private void save(String scenario, String json) throws IOException {
        StringWriter out = new StringWriter();
        int code = WeftCli.commandLine("diagnose").setOut(new PrintWriter(out)).execute("diagnose", "--control",
                mesh.control, "--window", WINDOW, "--baseline", BASELINE);
        assertThat(code).isZero();
        assertThat(out.toString()).isNotBlank();
        String named = DiagnoseCommand.render(DiagnoseCommand.parse(json));
        Path results = Path.of("target", "diagnose");
        Files.createDirectories(results);
        String command = "$ ./weft diagnose --window " + WINDOW + " --baseline " + BASELINE + "\n";
        Files.writeString(results.resolve(scenario + ".txt"), command + named);
        Files.writeString(results.resolve(scenario + "-next.txt"), command + out);
        Files.writeString(results.resolve(scenario + ".json"), json);
        System.out.println("[" + scenario + "]\n" + named + "[" + scenario + ", the command a moment later]\n" + out);
    }

    /** Closed-loop callers through the entry, each waiting {@code thinkMs} between calls. */
    private final class Load {
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final List<Thread> callers = new ArrayList<>();

        Load(int count, long thinkMs) {
            for (int i = 0; i < count; i++) {
                callers.add(Thread.ofVirtual().start(() -> {
                    while (!stopped.get()) {
                        try {
                            mesh.call();
                            if (thinkMs > 0) {
                                Thread.sleep(thinkMs);
                            }
                        } catch (IOException e) {
                            // counted by the sidecars; the load goes on
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }));
            }
        }

        void stop() {
            stopped.set(true);
            for (Thread t : callers) {
                try {
                    t.join(Duration.ofSeconds(25));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
