package dev.weft.control.trace;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SpanStoreTest {
    private static final long T = 1_700_000_000_000_000L;

    private static List<StoredSpan> parse(String json) {
        return StoredSpan.parseList(json.getBytes(StandardCharsets.UTF_8));
    }

    /** A two-span trace: client and server, {@code dur} µs long. */
    private static List<StoredSpan> trace(int n, long dur, boolean error) {
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
        List<StoredSpan> spans = parse("  [ " + one + " ,\n" + Spans.span(Spans.traceId(1), Spans.spanId(1),
                "00f067aa0ba902b7", "SERVER", "provider", null, T + 1, 1000, false) + "]");
        assertThat(spans).hasSize(2);
        StoredSpan s = spans.getFirst();
        assertThat(new String(s.json(), StandardCharsets.UTF_8)).isEqualTo(one);
        assertThat(s.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(s.id()).isEqualTo("00f067aa0ba902b7");
        assertThat(s.localService()).isEqualTo("consumer");
        assertThat(s.remoteService()).isEqualTo("provider");
        assertThat(s.duration()).isEqualTo(1234);
        assertThat(s.error()).isTrue();
        assertThat(spans.get(1).parentId()).isEqualTo("00f067aa0ba902b7");
        assertThat(spans.get(1).error()).isFalse();
    }

    @Test
    void malformedBatchesAreRefusedWithWhatWasWrong() {
        assertThatThrownBy(() -> parse("{}")).hasMessageContaining("expected a JSON array");
        assertThatThrownBy(() -> parse("[{\"id\":\"0000000000000001\"}]")).hasMessageContaining("valid traceId");
        assertThatThrownBy(() -> parse("[{\"traceId\":\"00000000000000000000000000000001\",\"id\":\"xyz\"}]"))
                .hasMessageContaining("valid id");
        assertThatThrownBy(() -> parse("[{\"traceId\":")).hasMessageContaining("malformed span JSON");
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
        List<SpanStore.Trace> all = store.query(s -> true, 0, Long.MAX_VALUE, 10);
        assertThat(all).extracting(SpanStore.Trace::id).containsExactly(Spans.traceId(3), Spans.traceId(2),
                Spans.traceId(1));
        assertThat(store.query(s -> s.duration() >= 10_000, 0, Long.MAX_VALUE, 10)).extracting(SpanStore.Trace::id)
                .containsExactly(Spans.traceId(2));
        assertThat(store.query(StoredSpan::error, 0, Long.MAX_VALUE, 10)).extracting(SpanStore.Trace::id)
                .containsExactly(Spans.traceId(3));
        assertThat(store.query(s -> true, T + 2, T + 2, 10)).extracting(SpanStore.Trace::id)
                .containsExactly(Spans.traceId(2));
        assertThat(store.query(s -> true, 0, Long.MAX_VALUE, 1)).hasSize(1);
        assertThat(store.services()).containsExactly("consumer", "provider");
        assertThat(store.dependencies(0, Long.MAX_VALUE)).containsExactly(
                new SpanStore.Link("consumer", "provider", 3, 1));
    }
}
