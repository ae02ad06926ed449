package dev.weft.control.trace;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SpanStoreTest {
    private static final long T = 1_700_000_000_000_000L;

    private static byte[] parse(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    /** A two-span trace: client and server, {@code dur} µs long. */
    private static byte[] trace(int n, long dur, boolean error) {
        String t = Spans.traceId(n);
        return parse(Spans.array(
                Spans.span(t, Spans.spanId(2 * n), null, "CLIENT", "consumer", "provider", T + n, dur, error),
                Spans.span(t, Spans.spanId(2 * n + 1), Spans.spanId(2 * n), "SERVER", "provider", null, T + n + 5,
                        dur - 10, false)));
    }

    @Test
    void parsingKeepsEachSpansOwnBytesAndTheFieldsQueriesNeed() {
        String one = Spans.span("4BF92F3577B34DA6A3CE929D0E0E4736", "00F067AA0BA902B7", null, "CLIENT", "Consumer",
                "provider", T, 1234, true);
        SpanBatch spans = new SpanBatch();
        spans.parse(parse("  [ " + one + " ,\n" + Spans.span(Spans.traceId(1), Spans.spanId(1),
                "00f067aa0ba902b7", "SERVER", "provider", null, T + 1, 1000, false) + "]"), new NameTable());
        assertThat(spans.size).isEqualTo(2);
        assertThat(new String(spans.json(0), StandardCharsets.UTF_8)).isEqualTo(one);
        assertThat(spans.traceId(0)).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(spans.id(0)).isEqualTo("00f067aa0ba902b7");
        assertThat(spans.localService(0)).isEqualTo("consumer");
        assertThat(spans.remoteService(0)).isEqualTo("provider");
        assertThat(spans.duration[0]).isEqualTo(1234);
        assertThat(spans.error[0]).isTrue();
        assertThat(spans.parentId(1)).isEqualTo("00f067aa0ba902b7");
        assertThat(spans.error[1]).isFalse();
    }

    @Test
    void malformedBatchesAreRefusedWithWhatWasWrong() {
        SpanStore store = new SpanStore(10);
        assertThatThrownBy(() -> store.add(parse("{}"))).hasMessageContaining("expected a JSON array");
        assertThatThrownBy(() -> store.add(parse("[{\"id\":\"0000000000000001\"}]")))
                .hasMessageContaining("valid traceId");
        assertThatThrownBy(() -> store.add(parse("[{\"traceId\":\"00000000000000000000000000000001\",\"id\":\"xyz\"}]")))
                .hasMessageContaining("valid id");
        assertThatThrownBy(() -> store.add(parse("[{\"traceId\":"))).hasMessageContaining("malformed span JSON");
        assertThat(store.spanCount()).isZero();
    }

    @Test
    void whenFullTheOldestTracesGoFirst() {
        SpanStore store = new SpanStore(20);
        for (int i = 0; i < 30; i++) {
            store.add(trace(i, 1000, false));
        }
        assertThat(store.spanCount()).isLessThanOrEqualTo(20);
        assertThat(store.trace(Spans.traceId(0))).isNull();
        assertThat(store.trace(Spans.traceId(29))).isNotNull();
        assertThat(store.trace(Spans.traceId(29)).spans()).hasSize(2);
        assertThat(store.evictedTraces()).isEqualTo(20);
    }

    @Test
    void failedAndSlowTracesOutliveOrdinaryOnes() {
        SpanStore store = new SpanStore(100);
        // 150 ordinary traces teach the store what "slow" means before the interesting ones arrive.
        for (int i = 0; i < 150; i++) {
            store.add(trace(i, 1000, false));
        }
        store.add(trace(1000, 1000, true));
        store.add(trace(1001, 900_000, false));
        for (int i = 2000; i < 2200; i++) {
            store.add(trace(i, 1000, false));
        }
        assertThat(store.trace(Spans.traceId(1000))).as("the failed trace").isNotNull();
        assertThat(store.trace(Spans.traceId(1001))).as("the slow trace").isNotNull();
        assertThat(store.trace(Spans.traceId(2000))).as("an ordinary trace as old").isNull();
        assertThat(store.protectedTraceCount()).isEqualTo(2);
        assertThat(store.spanCount()).isLessThanOrEqualTo(100);
    }

    @Test
    void aTraceHoldsAtMostItsLimitOfSpans() {
        SpanStore store = new SpanStore(100_000);
        String t = Spans.traceId(7);
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < SpanStore.MAX_SPANS_PER_TRACE + 5; i++) {
            sb.append(i == 0 ? "" : ",").append(Spans.span(t, Spans.spanId(i), null, "CLIENT", "a", "b", T, 5, false));
        }
        store.add(parse(sb.append(']').toString()));
        assertThat(store.trace(t).spans()).hasSize(SpanStore.MAX_SPANS_PER_TRACE);
        assertThat(store.droppedOverTraceLimit()).isEqualTo(5);
    }

    @Test
    void queriesFilterByServiceDurationErrorAndTimeNewestFirst() {
        SpanStore store = new SpanStore(1000);
        store.add(trace(1, 1000, false));
        store.add(trace(2, 50_000, false));
        store.add(trace(3, 2000, true));
        List<SpanStore.Trace> all = store.query(SpanStore.Filter.ANY, 0, Long.MAX_VALUE, 10);
        assertThat(all).extracting(SpanStore.Trace::id).containsExactly(Spans.traceId(3), Spans.traceId(2),
                Spans.traceId(1));
        assertThat(store.query(new SpanStore.Filter(null, null, null, 10_000, Long.MAX_VALUE, false), 0, Long.MAX_VALUE, 10)).extracting(SpanStore.Trace::id)
                .containsExactly(Spans.traceId(2));
        assertThat(store.query(new SpanStore.Filter(null, null, null, 0, Long.MAX_VALUE, true), 0, Long.MAX_VALUE, 10)).extracting(SpanStore.Trace::id)
                .containsExactly(Spans.traceId(3));
        assertThat(store.query(SpanStore.Filter.ANY, T + 2, T + 2, 10)).extracting(SpanStore.Trace::id)
                .containsExactly(Spans.traceId(2));
        assertThat(store.query(SpanStore.Filter.ANY, 0, Long.MAX_VALUE, 1)).hasSize(1);
        assertThat(store.services()).containsExactly("consumer", "provider");
        assertThat(store.dependencies(0, Long.MAX_VALUE)).containsExactly(
                new SpanStore.Link("consumer", "provider", 3, 1));
    }

    @Test
    void spansArrivingApartSurviveManyTurnsOfTheRingWithTheirBytesIntact() {
        // Each trace's server span arrives three batches after its client span, as from two sidecars, so evicted
        // traces leave holes in the ring; ten times the capacity goes through it; names carry a counter so that
        // the name table must give back the names of evicted spans.
        SpanStore store = new SpanStore(300);
        int traces = 0;
        for (int batch = 0; batch < 100; batch++) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < 15; i++) {
                int n = traces + i;
                sb.append(i == 0 ? "" : ",").append(Spans.span(Spans.traceId(n), Spans.spanId(2 * n), null, "CLIENT",
                        "consumer-" + n, "provider", T + n, 1000 + n % 7, false));
                if (n >= 45) {
                    int m = n - 45;
                    sb.append(',').append(Spans.span(Spans.traceId(m), Spans.spanId(2 * m + 1), Spans.spanId(2 * m),
                            "SERVER", "provider", null, T + m + 5, 990, false));
                }
            }
            store.add(parse(sb.append(']').toString()));
            traces += 15;
        }
        assertThat(store.spanCount()).isLessThanOrEqualTo(300);
        assertThat(store.nameCount()).as("names of evicted spans are given back").isLessThan(400);
        List<SpanStore.Trace> kept = store.query(SpanStore.Filter.ANY, 0, Long.MAX_VALUE, 10_000);
        assertThat(kept).hasSize(store.traceCount());
        for (SpanStore.Trace t : kept) {
            int n = Integer.parseInt(t.id(), 16) - 1;
            String client = Spans.span(Spans.traceId(n), Spans.spanId(2 * n), null, "CLIENT", "consumer-" + n,
                    "provider", T + n, 1000 + n % 7, false);
            assertThat(new String(t.spans().getFirst(), StandardCharsets.UTF_8)).isEqualTo(client);
            if (t.spans().size() == 2) {
                assertThat(new String(t.spans().get(1), StandardCharsets.UTF_8)).isEqualTo(Spans.span(
                        Spans.traceId(n), Spans.spanId(2 * n + 1), Spans.spanId(2 * n), "SERVER", "provider", null,
                        T + n + 5, 990, false));
            }
        }
        assertThat(store.trace(Spans.traceId(traces - 1))).as("the newest trace").isNotNull();
        assertThat(store.spanNames("consumer-" + (traces - 1), true)).containsExactly("provider");
        assertThat(store.services()).contains("provider", "consumer-" + (traces - 1))
                .doesNotContain("consumer-0");
    }

    @Test
    void aCheckedBatchKeepsOnlyTheSendersOwnSpansAndCountsTheOthers() {
        SpanStore store = new SpanStore(100);
        String noService = "{\"traceId\":\"" + Spans.traceId(3) + "\",\"id\":\"" + Spans.spanId(9)
                + "\",\"name\":\"get\",\"timestamp\":" + T + ",\"duration\":5}";
        byte[] batch = parse(Spans.array(
                Spans.span(Spans.traceId(1), Spans.spanId(1), null, "CLIENT", "Consumer", "provider", T, 5, false),
                Spans.span(Spans.traceId(1), Spans.spanId(2), Spans.spanId(1), "SERVER", "provider", null, T, 4,
                        false),
                Spans.span(Spans.traceId(2), Spans.spanId(3), null, "CLIENT", "consumer", "billing", T, 5, false),
                noService));

        assertThat(store.add(batch, "consumer")).as("the provider's span and the one naming no service").isEqualTo(2);

        assertThat(store.accepted()).isEqualTo(2);
        assertThat(store.services()).containsExactly("consumer");
        assertThat(store.trace(Spans.traceId(1)).spans()).hasSize(1);
        assertThat(store.trace(Spans.traceId(3))).isNull();
        assertThat(store.nameCount()).as("the refused spans' names are given back (SERVER, get): post, CLIENT,"
                + " consumer, and provider and billing as remote services remain").isEqualTo(5);
        assertThat(store.add(batch, "billing")).as("a sender no span names: every span is refused").isEqualTo(4);
        assertThat(store.add(batch, null)).as("unchecked: every span stored").isZero();
        assertThat(store.accepted()).isEqualTo(6);
    }

    @Test
    void sixteenAndThirtyTwoDigitTraceIdsAreFoundAsTheyWereSent() {
        SpanStore store = new SpanStore(100);
        store.add(parse(Spans.array(Spans.span("00F067AA0BA902B7", Spans.spanId(1), null, "CLIENT", "a", "b", T, 5,
                false), Spans.span(Spans.traceId(5), Spans.spanId(2), null, "CLIENT", "a", "b", T, 5, false))));
        assertThat(store.trace("00f067aa0ba902b7").id()).isEqualTo("00f067aa0ba902b7");
        assertThat(store.trace(Spans.traceId(5)).id()).isEqualTo(Spans.traceId(5));
        assertThat(store.trace("not-hex")).isNull();
    }

    @Test
    void failedTracesTurnOverInTheProtectedAreaWithTheirBytesIntact() {
        SpanStore store = new SpanStore(100);
        for (int i = 0; i < 150; i++) {
            store.add(trace(i, 1000, false));
        }
        // Every trace from here fails: each is copied into the protected area (20 spans) when evicted, and the
        // protected area itself turns over many times.
        for (int i = 1000; i < 1500; i++) {
            store.add(trace(i, 1000, true));
        }
        assertThat(store.spanCount()).isLessThanOrEqualTo(100);
        assertThat(store.protectedTraceCount()).isEqualTo(10);
        for (int i = 1000; i < 1500; i++) {
            SpanStore.Trace t = store.trace(Spans.traceId(i));
            if (t != null) {
                assertThat(t.hasError()).isTrue();
                assertThat(new String(t.spans().get(1), StandardCharsets.UTF_8)).isEqualTo(Spans.span(
                        Spans.traceId(i), Spans.spanId(2 * i + 1), Spans.spanId(2 * i), "SERVER", "provider", null,
                        T + i + 5, 990, false));
            }
        }
        assertThat(store.trace(Spans.traceId(1000))).isNull();
        assertThat(store.query(new SpanStore.Filter(null, null, null, 0, Long.MAX_VALUE, true), 0, Long.MAX_VALUE,
                10_000)).hasSize(store.traceCount());
    }

    @Test
    void aSpanLargerThanTheWholeStoreIsDroppedAndCounted() {
        SpanStore store = new SpanStore(2);
        String big = Spans.span(Spans.traceId(1), Spans.spanId(1), null, "CLIENT", "x".repeat(4000), null, T, 5, false);
        store.add(parse(Spans.array(big, Spans.span(Spans.traceId(2), Spans.spanId(2), null, "CLIENT", "a", null, T,
                5, false))));
        assertThat(store.droppedTooLarge()).isEqualTo(1);
        assertThat(store.trace(Spans.traceId(1))).isNull();
        assertThat(store.trace(Spans.traceId(2))).isNotNull();
        assertThat(store.services()).containsExactly("a");
    }
}
