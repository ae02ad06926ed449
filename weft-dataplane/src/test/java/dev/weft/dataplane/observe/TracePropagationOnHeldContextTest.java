package dev.weft.dataplane.observe;

import dev.weft.dataplane.http.RequestHead;
import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.Hex;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every case of {@link TracePropagationTest} again on headers that hold the trace context as numbers beside the
 * fields, as Weft's request head does; and what only those have: a context that arrived as numbers is read without a
 * field, and the next one is held as numbers, no {@code traceparent} field left among the fields.
 */
class TracePropagationOnHeldContextTest extends TracePropagationTest {
    static final Traceparent ARRIVED = new Traceparent(0x4bf92f3577b34da6L, 0xa3ce929d0e0e4736L, 0x00f067aa0ba902b7L, 1);

    @Override
    MapHeaders headers() {
        return MapHeaders.heldContext();
    }

    @Test
    void aContextThatArrivedAsNumbersIsContinuedAsNumbers() {
        RequestHead h = new RequestHead("GET", "provider", "/", new WmpHeaders().add("accept", "*/*"));
        h.traceparent(ARRIVED);
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceIdHex()).isEqualTo(TRACE);
        assertThat(Hex.of(x.parentId)).isEqualTo(PARENT);
        assertThat(x.isSampled()).isTrue();
        assertThat(h.traceparent()).isEqualTo(new Traceparent(ARRIVED.traceHi(), ARRIVED.traceLo(), x.spanId, 1));
        assertThat(h.get("traceparent")).isEqualTo("00-" + TRACE + "-" + Hex.of(x.spanId) + "-01");
        assertThat(h.fields().contains("traceparent")).isFalse();
        assertThat(h.fields().get("b3")).isEqualTo(TRACE + "-" + Hex.of(x.spanId) + "-1");
    }

    @Test
    void aTraceparentFieldIsReadThenHeldAsNumbersAndEveryOneOfItsFieldsGoes() {
        RequestHead h = new RequestHead("GET", "provider", "/", new WmpHeaders().add("x-request-id", "r1")
                .add("traceparent", "00-" + TRACE + "-" + PARENT + "-00").add("accept", "*/*")
                .add("traceparent", "00-11111111111111111111111111111111-" + PARENT + "-01"));
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceIdHex()).isEqualTo(TRACE); // the first one counts
        assertThat(x.isSampled()).isFalse();
        assertThat(h.traceparent()).isEqualTo(new Traceparent(ARRIVED.traceHi(), ARRIVED.traceLo(), x.spanId, 0));
        assertThat(h.fields()).isEqualTo(new WmpHeaders().add("x-request-id", "r1").add("accept", "*/*")
                .add("b3", TRACE + "-" + Hex.of(x.spanId) + "-0"));
    }

    @Test
    void numbersCountBeforeAnyTraceparentField() {
        RequestHead h = new RequestHead("GET", "provider", "/", new WmpHeaders()
                .add("traceparent", "00-11111111111111111111111111111111-" + PARENT + "-01"));
        h.traceparent(ARRIVED);
        ObservedExchange x = exchange();
        both.propagate(h, x, System.nanoTime());

        assertThat(x.traceIdHex()).isEqualTo(TRACE);
        assertThat(h.fields().contains("traceparent")).isFalse();
    }

    @Test
    void settingTheFieldAsTextReplacesTheNumbers() {
        RequestHead h = new RequestHead("GET", "provider", "/", new WmpHeaders());
        h.traceparent(ARRIVED);
        assertThat(h.get("traceparent")).isEqualTo("00-" + TRACE + "-" + PARENT + "-01");
        h.set("traceparent", "00-" + TRACE + "-" + PARENT + "-00");
        assertThat(h.traceparent()).isNull();
        assertThat(h.get("traceparent")).isEqualTo("00-" + TRACE + "-" + PARENT + "-00");
    }
}
