package dev.weft.control.cli;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class WaterfallTest {
    private static final long T = 1_700_000_000_000_000L;

    private static Map<String, Long> steps(long admitted, long connected, long sent, long firstByte) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("admitted", admitted);
        m.put("connected", connected);
        m.put("sent", sent);
        m.put("first-byte", firstByte);
        return m;
    }

    /** Consumer side 0-100 ms (10 ms queued); provider side 20-90 ms with the app answering at 80 ms. */
    static List<TraceSpan> trace() {
        TraceSpan client = new TraceSpan("t1", "c1", null, "CLIENT", "post", T, 100_000, "consumer", "provider",
                steps(T + 10_000, T + 12_000, T + 15_000, T + 85_000),
                Map.of("http.method", "POST", "http.path", "/", "http.status_code", "200", "weft.direction", "outbound",
                        "weft.endpoint", "provider-1", "weft.endpoint.address", "127.0.0.1:7001"));
        TraceSpan server = new TraceSpan("t1", "s1", "c1", "SERVER", "post", T + 20_000, 70_000, "provider", null,
                steps(T + 20_000, T + 21_000, T + 22_000, T + 80_000),
                Map.of("http.method", "POST", "http.path", "/", "http.status_code", "200", "weft.direction", "inbound"));
        return List.of(server, client);
    }

    @Test
    void eachSpanIsABarOnTheTracesTimeAxisWithTheSidecarsStepsInside() {
        String out = Waterfall.render(trace(), 20);
        assertThat(out).contains("trace t1  2 spans  100.00 ms  consumer → provider");
        // 20 cells of 5 ms, each drawn as the step at its middle: queued 0-10 ms, connecting and sending to 15,
        // waiting for the answer to 85, the answer to 100.
        assertThat(out).containsPattern("consumer → provider +POST / +200 +100.00 ms +\\|qqc--------------===\\|");
        // The inbound side, indented under its parent, from 20 ms: the app's time from 22 to 80 ms, the answer to 90.
        assertThat(out).containsPattern("\n  provider \\(inbound\\) +POST / +200 +70.00 ms +\\|    ------------==  \\|");
        assertThat(out).contains("queue 10.00 ms", "upstream 70.00 ms", "endpoint provider-1 (127.0.0.1:7001)",
                "app 58.00 ms", "legend:");
        assertThat(out.indexOf("consumer → provider  POST")).isLessThan(out.indexOf("provider (inbound)  POST"));
    }

    @Test
    void aListPutsFailedTracesFirstAndSaysHowToOpenOne() {
        Waterfall.Summary s = Waterfall.summarize(trace());
        assertThat(s.duration()).isEqualTo(100_000);
        assertThat(s.root()).isEqualTo("POST /");
        assertThat(s.services()).isEqualTo("consumer → provider");
        assertThat(s.failed()).isFalse();
        String list = Waterfall.renderList(List.of(s), 7, "15m", true);
        assertThat(list).contains("t1", "100.00 ms", "1 of 7 traces examined from the last 15m", "./weft trace ID");
    }
}
