package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ObservabilityConfig.Propagation;
import dev.weft.protocol.Hex;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every case of {@link TracePropagationTest} again on a WMP field list, which the propagation walks once for every
 * name and writes the next traceparent into where the caller's stood (Weft's request head); and what only a list has.
 */
class TracePropagationOnFieldsTest extends TracePropagationTest {
    @Override
    MapHeaders headers() {
        return MapHeaders.fieldList();
    }

    @Test
    void aSecondTraceparentIsDroppedAndTheFirstIsReplacedWhereItStood() {
        MapHeaders h = headers().with("x-request-id", "r1").with("traceparent", "00-" + TRACE + "-" + PARENT + "-01")
                .with("accept", "*/*").with("traceparent", "00-11111111111111111111111111111111-" + PARENT + "-01");
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceIdHex()).isEqualTo(TRACE); // the first one counts, as get() reads it
        assertThat(h.fields().size()).isEqualTo(4); // x-request-id, traceparent, accept, b3
        assertThat(h.fields().name(1)).isEqualTo("traceparent");
        assertThat(h.fields().value(1)).isEqualTo("00-" + TRACE + "-" + Hex.of(x.spanId) + "-01");
        assertThat(h.fields().name(3)).isEqualTo("b3");
    }

    @Test
    void theOnlyTraceparentIsReplacedWhereItStood() {
        MapHeaders h = headers().with("traceparent", "00-" + TRACE + "-" + PARENT + "-00").with("accept", "*/*");
        ObservedExchange x = exchange();
        withRatio(Set.of(Propagation.W3C), 1.0).propagate(h, x, System.nanoTime());

        assertThat(h.fields().size()).isEqualTo(2);
        assertThat(h.fields().name(0)).isEqualTo("traceparent");
        assertThat(h.fields().value(0)).isEqualTo("00-" + TRACE + "-" + Hex.of(x.spanId) + "-00");
        assertThat(h.fields().value(1)).isEqualTo("*/*");
    }
}
