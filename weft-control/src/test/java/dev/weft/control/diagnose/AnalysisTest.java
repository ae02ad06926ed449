package dev.weft.control.diagnose;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class AnalysisTest {
    private static final long S = 1_000_000;
    private static final long NOW = 1_800_000_000L * S;
    private static final long WINDOW = 30 * S;
    private static final long BASELINE = 300 * S;

    @Test
    void self_time_is_the_duration_minus_the_union_of_overlapping_children() {
        DiagnoseSpan parent = span("p", null, 0, 100);
        CallTree t = new CallTree(List.of(parent, span("c1", "p", 10, 30), span("c2", "p", 30, 30),
                span("c3", "p", 80, 10), span("c4", "p", 95, 50)));
        // children cover 10-60, 80-90 and 95-100 (clipped to the parent): 65 µs
        assertThat(t.selfMicros(0)).isEqualTo(35);
        assertThat(t.selfMicros(1)).isEqualTo(30);
    }

    @Test
    void a_span_whose_parent_is_missing_is_a_root_and_a_repeated_span_counts_once() {
        CallTree t = new CallTree(List.of(span("a", "gone", 0, 100), span("b", "a", 10, 20), span("b", "a", 10, 20)));
        assertThat(t.parent(0)).isEqualTo(-1);
        assertThat(t.duplicate(2)).isTrue();
        assertThat(t.selfMicros(0)).isEqualTo(80);
    }

    @Test
    void one_instance_ten_times_slower_is_named_with_its_endpoint_and_its_callers_wait_on_it() {
        Analysis a = analysis(Map.of());
        FourTiers normal = new FourTiers();
        FourTiers slow = new FourTiers().c(FourTiers.C1, 200_000);
        for (int i = 0; i < 200; i++) {
            a.add(normal.c(i % 2 == 0 ? FourTiers.C1 : FourTiers.C2, 20_000).trace(NOW - 200 * S + i * S / 2));
        }
        for (int i = 0; i < 40; i++) {
            a.add(i % 4 == 0 ? slow.trace(NOW - 20 * S + i * S / 4) : normal.c(FourTiers.C2, 20_000).trace(NOW - 20 * S + i * S / 4));
        }
        Diagnosis d = a.finish();
        assertThat(d.healthy()).isFalse();
        Diagnosis.Culprit top = d.culprits().getFirst();
        assertThat(top.service()).isEqualTo("c");
        assertThat(top.endpoint()).isEqualTo(FourTiers.C1);
        assertThat(top.endpointId()).isEqualTo("c-1");
        assertThat(top.kind()).isEqualTo("latency");
        assertThat(top.score()).isBetween(9.0, 11.0);
        assertThat(top.traceIds()).hasSize(5);
        assertThat(d.culprits()).extracting(Diagnosis.Culprit::service).containsOnly("c");
        assertThat(d.waiting()).containsExactly("b", "a", "entry");
        assertThat(d.verdict()).startsWith("c endpoint 127.0.0.1:7003 (c-1) is 10× slower in its own time")
                .contains("b, a and entry are waiting on it");
    }

    @Test
    void a_slow_service_is_named_and_its_queueing_caller_is_back_pressure_not_a_cause() {
        Analysis a = analysis(Map.of());
        for (int i = 0; i < 100; i++) {
            a.add(new FourTiers().c(i % 2 == 0 ? FourTiers.C1 : FourTiers.C2, 20_000).trace(NOW - 200 * S + i * S));
        }
        for (int i = 0; i < 40; i++) {
            FourTiers slow = new FourTiers().c(i % 2 == 0 ? FourTiers.C1 : FourTiers.C2, 150_000);
            slow.bQueue = 300_000;
            a.add(slow.trace(NOW - 20 * S + i * S / 4));
        }
        Diagnosis d = a.finish();
        assertThat(d.culprits()).hasSize(1);
        assertThat(d.culprits().getFirst().service()).isEqualTo("c");
        assertThat(d.culprits().getFirst().endpoint()).as("both instances: the service").isNull();
        assertThat(d.backPressure()).extracting(Diagnosis.BackPressure::service, Diagnosis.BackPressure::waitingOn)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("b", "c"));
        assertThat(d.backPressure().getFirst().queueTimeNowMs()).isEqualTo(300.0);
        assertThat(d.verdict()).contains("b queues for c (back-pressure, not a cause)");
    }

    @Test
    void the_service_originating_errors_is_named_and_not_those_passing_them_back() {
        Analysis a = analysis(Map.of());
        for (int i = 0; i < 100; i++) {
            a.add(new FourTiers().trace(NOW - 200 * S + i * S));
        }
        for (int i = 0; i < 100; i++) {
            FourTiers t = new FourTiers().c(i % 2 == 0 ? FourTiers.C1 : FourTiers.C2, 20_000);
            t.bFails = i % 5 == 0;
            a.add(t.trace(NOW - 25 * S + i * S / 5));
        }
        Diagnosis d = a.finish();
        assertThat(d.culprits()).extracting(Diagnosis.Culprit::service, Diagnosis.Culprit::kind)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("b", "errors"));
        Diagnosis.Culprit b = d.culprits().getFirst();
        assertThat(b.errorRate()).isEqualTo(0.2);
        assertThat(b.errorKinds()).containsEntry("500", 20L);
        assertThat(d.verdict()).startsWith("b originates 20.0% errors (500 ×20); a and entry pass its errors back");
        assertThat(d.violations()).extracting(Diagnosis.Violation::service).contains("a", "b", "entry");
    }

    @Test
    void a_burst_with_nothing_slow_names_no_service_and_says_the_entry_is_over_its_limit() {
        Analysis a = analysis(Map.of());
        for (int i = 0; i < 100; i++) {
            a.add(new FourTiers().trace(NOW - 200 * S + i * S));
        }
        for (int i = 0; i < 100; i++) {
            FourTiers t = new FourTiers();
            t.entryShed = i % 3 == 0;
            a.add(t.trace(NOW - 25 * S + i * S / 5));
        }
        Diagnosis d = a.finish();
        assertThat(d.culprits()).isEmpty();
        assertThat(d.healthy()).isFalse();
        assertThat(d.overloaded()).extracting(Diagnosis.Overloaded::service).containsExactly("entry");
        assertThat(d.overloaded().getFirst().reason()).contains("34 of 100 calls to a", "outbound-limit ×34");
        assertThat(d.verdict()).startsWith("no culprit: no service's own time grew; entry is over its limit");
    }

    @Test
    void steady_traffic_is_healthy() {
        Analysis a = analysis(Map.of());
        for (int i = 0; i < 200; i++) {
            a.add(new FourTiers().c(i % 2 == 0 ? FourTiers.C1 : FourTiers.C2, 20_000 + i % 7 * 100)
                    .trace(NOW - 300 * S + i * S * 3 / 2));
        }
        Diagnosis d = a.finish();
        assertThat(d.healthy()).as(d.toString()).isTrue();
        assertThat(d.verdict()).startsWith("healthy: ");
        assertThat(d.window().windowTraces()).isPositive();
        assertThat(d.window().baselineTraces()).isPositive();
    }

    @Test
    void no_traces_says_there_is_nothing_to_judge() {
        Diagnosis d = analysis(Map.of()).finish();
        assertThat(d.healthy()).isTrue();
        assertThat(d.verdict()).startsWith("no traces in the last 30 s");
    }

    @Test
    void an_slo_sets_the_error_threshold_and_the_p99_limit() {
        Map<String, Slo> slos = Slos.read(Map.of("team", """
                services:
                  b:
                    timeout: 2s
                    slo: {p99: 1ms, error-rate: 25%}
                  "*":
                    slo: {error-rate: 0.5}
                """));
        assertThat(slos.get("b")).isEqualTo(new Slo(java.time.Duration.ofMillis(1), 0.25));
        assertThat(slos.get("*")).isEqualTo(new Slo(null, 0.5));
        Analysis a = analysis(slos);
        for (int i = 0; i < 100; i++) {
            FourTiers t = new FourTiers();
            t.bFails = i % 5 == 0;
            a.add(t.trace(NOW - 25 * S + i * S / 5));
        }
        Diagnosis d = a.finish();
        assertThat(d.culprits()).as("20% is within b's SLO of 25%").isEmpty();
        assertThat(d.violations()).anySatisfy(v -> {
            assertThat(v.service()).isEqualTo("b");
            assertThat(v.what()).isEqualTo("p99");
            assertThat(v.fromSlo()).isTrue();
        });
    }

    @Test
    void unreadable_policy_documents_leave_the_default_rule() {
        assertThat(Slos.read(Map.of("x", "services: [", "y", "services:\n  b:\n    slo: {p99: soon}\n"))).isEmpty();
    }

    @Test
    void spans_that_ended_after_the_window_are_left_out_as_their_children_may_not_have_arrived() {
        Analysis a = analysis(Map.of());
        List<DiagnoseSpan> late = new FourTiers().trace(NOW - 10_000);
        a.add(late.subList(0, 4)); // b's outbound call and c's span not exported yet
        Diagnosis d = a.finish();
        assertThat(d.window().spans()).isZero();
    }

    @Test
    void a_call_failing_between_the_sidecars_is_the_callees_own_error_and_shed_calls_are_overload() {
        Analysis a = analysis(Map.of());
        for (int i = 0; i < 20; i++) {
            long t = NOW - 20 * S + i * S / 2;
            String trace = String.format("%032x", 9000 + i);
            // x calls y; every other call is reset before any answer (y crashed): no SERVER span for it
            boolean reset = i % 2 == 0;
            a.add(List.of(new DiagnoseSpan(trace, "01", null, true, "x", "y", t, 5_000, t + 10, reset ? 502 : 200,
                    reset ? "upstream-reset" : null, "127.0.0.1:9001", "y-1")));
        }
        for (int i = 0; i < 20; i++) {
            long t = NOW - 20 * S + i * S / 2;
            String trace = String.format("%032x", 9100 + i);
            // z's own sidecar refuses a third of what reaches it: its inbound limit
            a.add(List.of(new DiagnoseSpan(trace, "02", null, false, "z", null, t, 300, 0, i % 3 == 0 ? 503 : 200,
                    i % 3 == 0 ? "inbound-limit" : null, null, null)));
        }
        Diagnosis d = a.finish();
        assertThat(d.culprits()).extracting(Diagnosis.Culprit::service, Diagnosis.Culprit::endpoint, Diagnosis.Culprit::kind)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("y", null, "errors")); // its only instance: the service
        assertThat(d.culprits().getFirst().errorKinds()).containsEntry("upstream-reset", 10L);
        assertThat(d.overloaded()).extracting(Diagnosis.Overloaded::service).containsExactly("z");
        assertThat(d.overloaded().getFirst().reason()).contains("refused 7 of 20 requests at once (inbound-limit ×7)");
    }

    private static Analysis analysis(Map<String, Slo> slos) {
        return new Analysis(Analysis.Params.of(NOW, WINDOW, BASELINE, slos));
    }

    private static DiagnoseSpan span(String id, String parent, long start, long duration) {
        return new DiagnoseSpan("t1", id, parent, false, "s", null, start, duration, 0, 200, null, null, null);
    }
}
