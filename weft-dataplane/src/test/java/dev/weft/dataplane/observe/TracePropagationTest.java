package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.dataplane.observe.ObservabilityConfig.Propagation;
import dev.weft.protocol.Hex;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Run on headers only read by name; {@link TracePropagationOnFieldsTest} runs every case again on a field list. */
class TracePropagationTest {
    /** Fresh, empty headers of the kind this class tests. */
    MapHeaders headers() {
        return new MapHeaders();
    }

    /** The default reservoir, then {@code ratio}: what a sidecar's flags make, bar the reservoir's size. */
    static TracePropagation withRatio(Set<Propagation> write, double ratio) {
        return new TracePropagation(write, new TraceSampler(ObservabilityConfig.DEFAULT_TRACE_RESERVOIR, ratio));
    }

    static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String PARENT = "00f067aa0ba902b7";

    final TracePropagation both = withRatio(EnumSet.of(Propagation.W3C, Propagation.B3), 1.0);

    static ObservedExchange exchange() {
        return new ObservedExchange(null, null, Direction.OUTBOUND, "consumer", "GET", "/", null, "default", 1, 1);
    }

    @Test
    void aRequestWithoutContextStartsASampledTraceAndCarriesItInBothFormats() {
        MapHeaders h = headers();
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceStarted).isTrue();
        assertThat(x.isSampled()).isTrue();
        assertThat(x.parentId).isZero();
        String traceId = x.traceIdHex();
        String spanId = Hex.of(x.spanId);
        assertThat(h.get("traceparent")).isEqualTo("00-" + traceId + "-" + spanId + "-01");
        assertThat(h.get("b3")).isEqualTo(traceId + "-" + spanId + "-1");
        assertThat(h.map()).doesNotContainKey("x-b3-traceid");
    }

    @Test
    void byDefaultOnlyW3cIsWrittenAndB3OnlyWhenTheRequestCameWithIt() {
        TracePropagation defaults = withRatio(ObservabilityConfig.defaults().propagation(), 1.0);
        MapHeaders plain = headers();
        defaults.propagate(plain, exchange(), System.nanoTime());
        assertThat(plain.map()).containsOnlyKeys("traceparent");

        MapHeaders b3 = headers().with("b3", TRACE + "-" + PARENT + "-1");
        ObservedExchange x = exchange();
        defaults.propagate(b3, x, System.nanoTime());
        assertThat(b3.get("b3")).isEqualTo(TRACE + "-" + Hex.of(x.spanId) + "-1");
        assertThat(b3.get("traceparent")).isEqualTo("00-" + TRACE + "-" + Hex.of(x.spanId) + "-01");
    }

    @Test
    void aW3cCallerBecomesTheParentAndItsTraceIdAndDecisionAreKept() {
        MapHeaders h = headers().with("traceparent", "00-" + TRACE + "-" + PARENT + "-00")
                .with("tracestate", "vendor=x");
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceStarted).isFalse();
        assertThat(x.traceIdHex()).isEqualTo(TRACE);
        assertThat(Hex.of(x.parentId)).isEqualTo(PARENT);
        assertThat(x.isSampled()).isFalse();
        assertThat(h.get("traceparent")).startsWith("00-" + TRACE + "-").endsWith("-00")
                .doesNotContain(PARENT).isEqualTo("00-" + TRACE + "-" + Hex.of(x.spanId) + "-00");
        assertThat(h.get("tracestate")).isEqualTo("vendor=x");
    }

    @Test
    void aB3SingleHeaderWithA64BitIdIsContinuedAndStays64BitInB3() {
        MapHeaders h = headers().with("b3", "a3ce929d0e0e4736-" + PARENT + "-1");
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceHi).isZero();
        assertThat(Hex.of(x.traceLo)).isEqualTo("a3ce929d0e0e4736");
        assertThat(Hex.of(x.parentId)).isEqualTo(PARENT);
        assertThat(x.isSampled()).isTrue();
        assertThat(h.get("b3")).isEqualTo("a3ce929d0e0e4736-" + Hex.of(x.spanId) + "-1");
        assertThat(h.get("traceparent")).isEqualTo("00-0000000000000000a3ce929d0e0e4736-" + Hex.of(x.spanId) + "-01");
    }

    @Test
    void multiHeaderB3IsRewrittenSoTheNextHopNeverSeesAStaleParent() {
        MapHeaders h = headers().with("X-B3-TraceId", TRACE).with("X-B3-SpanId", PARENT)
                .with("X-B3-Sampled", "1");
        ObservedExchange x = new ObservedExchange(null, null, Direction.INBOUND, "provider", "GET", "/", null, "default", 1, 1);
        withRatio(Set.of(Propagation.W3C), 1.0).propagate(h, x, System.nanoTime());

        assertThat(x.traceIdHex()).isEqualTo(TRACE);
        assertThat(h.get("x-b3-traceid")).isEqualTo(TRACE);
        assertThat(h.get("x-b3-spanid")).isEqualTo(Hex.of(x.spanId)).isNotEqualTo(PARENT);
        assertThat(h.get("x-b3-parentspanid")).isEqualTo(PARENT);
        assertThat(h.get("x-b3-sampled")).isEqualTo("1");
        assertThat(h.get("traceparent")).contains(TRACE);
        assertThat(h.map()).doesNotContainKey("b3");
    }

    @Test
    void w3cWinsWhenACallerSendsBothFormats() {
        MapHeaders h = headers().with("traceparent", "00-" + TRACE + "-" + PARENT + "-01")
                .with("b3", "1111111111111111-2222222222222222-1");
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());
        assertThat(x.traceIdHex()).isEqualTo(TRACE);
        assertThat(h.get("b3")).startsWith(TRACE + "-");
    }

    @Test
    void malformedContextIsIgnoredWholeAndANewTraceStarts() {
        for (String bad : new String[]{"00-" + TRACE + "-" + PARENT, "ff-" + TRACE + "-" + PARENT + "-01",
                "00-00000000000000000000000000000000-" + PARENT + "-01", "00-" + TRACE + "-0000000000000000-01",
                "00-" + TRACE.replace('4', 'g') + "-" + PARENT + "-01", "00-" + TRACE + "-" + PARENT + "-01-extra"}) {
            ObservedExchange x = exchange();
            both.propagate(headers().with("traceparent", bad), x, System.nanoTime());
            assertThat(x.traceStarted).as(bad).isTrue();
            assertThat(x.traceIdHex()).as(bad).isNotEqualTo(TRACE);
        }
    }

    @Test
    void aFutureTraceparentVersionWithExtraFieldsIsAccepted() {
        ObservedExchange x = exchange();
        both.propagate(headers().with("traceparent", "01-" + TRACE + "-" + PARENT + "-01-what-comes-next"), x,
                System.nanoTime());
        assertThat(x.traceIdHex()).isEqualTo(TRACE);
    }

    @Test
    void withSamplingAtZeroNewTracesAreNotSampledButACallersYesIsHonoured() {
        // No reservoir either; the caller is a mesh peer (the inbound side), whose decision is honoured whatever the
        // reservoir holds (an app's "yes" on the outbound side only within it: TraceSamplerTest).
        TracePropagation none = new TracePropagation(Set.of(Propagation.W3C), new TraceSampler(0, 0.0));
        ObservedExchange fresh = exchange();
        MapHeaders h = headers();
        none.propagate(h, fresh, System.nanoTime());
        assertThat(fresh.isSampled()).isFalse();
        assertThat(h.get("traceparent")).endsWith("-00");

        ObservedExchange continued = new ObservedExchange(null, null, Direction.INBOUND, "provider", "GET", "/", null,
                "default", 1, 1);
        none.propagate(headers().with("traceparent", "00-" + TRACE + "-" + PARENT + "-01"), continued,
                System.nanoTime());
        assertThat(continued.isSampled()).isTrue();
    }

    @Test
    void aB3SamplingOnlyHeaderDecidesWithoutIds() {
        ObservedExchange x = exchange();
        both.propagate(headers().with("b3", "0"), x, System.nanoTime());
        assertThat(x.traceStarted).isTrue();
        assertThat(x.isSampled()).isFalse();
    }

    @Test
    void aB3DebugFlagForcesSampling() {
        ObservedExchange x = exchange();
        withRatio(Set.of(), 0.0).propagate(headers().with("x-b3-flags", "1"), x, System.nanoTime());
        assertThat(x.isSampled()).isTrue();
    }
}
