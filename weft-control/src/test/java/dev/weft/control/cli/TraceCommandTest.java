package dev.weft.control.cli;

import dev.weft.control.ControlPlane;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code ./weft trace} against a running control plane holding spans posted the way sidecars post them. */
class TraceCommandTest {
    private static final long NOW = System.currentTimeMillis() * 1000;

    @TempDir
    Path dataDir;
    private ControlPlane control;
    private String collector;

    private static String span(String trace, String id, String parent, String kind, String local, String remote,
                               long offsetMicros, long dur, int status, String error) {
        long ts = NOW - 60_000_000 + offsetMicros;
        return "{\"traceId\":\"" + trace + "\",\"id\":\"" + id + "\"" + (parent == null ? "" : ",\"parentId\":\"" + parent + "\"")
                + ",\"kind\":\"" + kind + "\",\"name\":\"post\",\"timestamp\":" + ts + ",\"duration\":" + dur
                + ",\"localEndpoint\":{\"serviceName\":\"" + local + "\"}"
                + (remote == null ? "" : ",\"remoteEndpoint\":{\"serviceName\":\"" + remote + "\"}")
                + ",\"annotations\":[{\"timestamp\":" + (ts + 100) + ",\"value\":\"admitted\"},{\"timestamp\":" + (ts + 200)
                + ",\"value\":\"sent\"},{\"timestamp\":" + (ts + dur - 100) + ",\"value\":\"first-byte\"}]"
                + ",\"tags\":{\"http.method\":\"POST\",\"http.path\":\"/\",\"http.status_code\":\"" + status + "\""
                + ",\"weft.direction\":\"" + (kind.equals("CLIENT") ? "outbound" : "inbound") + "\""
                + (error == null ? "" : ",\"error\":\"" + error + "\"") + "}}";
    }

    @BeforeEach
    void start() throws Exception {
        control = new ControlPlane();
        int port = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir).getPort();
        collector = "weft://127.0.0.1:" + port;
        String fast = "a".repeat(32);
        String slow = "b".repeat(32);
        String failed = "c".repeat(32);
        String body = "[" + String.join(",",
                span(fast, "1".repeat(16), null, "CLIENT", "consumer", "provider", 0, 2_000, 200, null),
                span(fast, "2".repeat(16), "1".repeat(16), "SERVER", "provider", null, 300, 1_500, 200, null),
                span(slow, "3".repeat(16), null, "CLIENT", "consumer", "provider", 1_000_000, 900_000, 200, null),
                span(failed, "4".repeat(16), null, "CLIENT", "consumer", "provider", 2_000_000, 5_000, 503, "no-capacity"))
                + "]";
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/api/v2/spans")).timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(202);
        }
    }

    @AfterEach
    void stop() {
        control.close();
    }

    private record Run(int code, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = new CommandLine(new TraceCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void theListShowsFailedTracesFirstThenTheSlowest() {
        Run r = run("--collector", collector);
        assertThat(r.code()).as(r.err()).isZero();
        int failed = r.out().indexOf("c".repeat(32));
        int slow = r.out().indexOf("b".repeat(32));
        int fast = r.out().indexOf("a".repeat(32));
        assertThat(failed).isPositive().isLessThan(slow);
        assertThat(slow).isLessThan(fast);
        assertThat(r.out()).contains("503 FAILED", "900.00 ms", "3 of 3 traces examined from the last 15m");
        assertThat(run("--collector", collector, "--errors").out()).contains("c".repeat(32))
                .doesNotContain("a".repeat(32));
        assertThat(run("--collector", collector, "--min-duration", "100ms").out()).contains("b".repeat(32))
                .doesNotContain("a".repeat(32));
    }

    @Test
    void anIdPrintsTheWaterfall() {
        Run r = run("--collector", collector, "a".repeat(32));
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("2 spans", "consumer → provider", "provider (inbound)", "app 1.20 ms");
    }

    @Test
    void anUnknownOrMalformedIdSaysWhatIsWrong() {
        Run missing = run("--collector", collector, "d".repeat(32));
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).contains("not found", "evicted, not sampled, or never sent there");
        Run bad = run("--collector", collector, "xyz");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("expected 16 or 32 hex digits");
        Run down = run("--collector", "http://127.0.0.1:1", "--limit", "3");
        assertThat(down.code()).isEqualTo(1);
        assertThat(down.err()).contains("cannot reach http://127.0.0.1:1");
    }
}
