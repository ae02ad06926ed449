package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sampler's decisions, at given instants (nothing here reads a clock): a reservoir of new traces a second, then
 * the ratio; a mesh peer's decision honoured whatever the reservoir holds; an outside caller's "sampled" only within
 * it, unless it continues a trace this sidecar took in sampled; failed exchanges' lone spans in a reservoir of their
 * own.
 */
class TraceSamplerTest {
    private static final long T0 = 1_000_000_000_000L;
    private static final long SECOND = 1_000_000_000L;

    private static ObservedExchange arriving(Direction direction, long traceLo, byte decision) {
        ObservedExchange x = new ObservedExchange(null, null, direction, "svc", "GET", "/", null, RouteTable.DEFAULT, T0, 1);
        x.traceHi = 7;
        x.traceLo = traceLo;
        x.sampled = decision;
        return x;
    }

    private static byte root(TraceSampler s, long now) {
        return s.decide(arriving(Direction.OUTBOUND, 1, TracePropagation.UNDECIDED), now);
    }

    @Test
    void newTracesFillTheReservoirThenOnlyTheRatioSamples() {
        TraceSampler s = new TraceSampler(10, 0.0, T0);
        for (int i = 0; i < 10; i++) {
            assertThat(root(s, T0)).as("token %d of the first second", i).isEqualTo(TraceSampler.RESERVOIR);
        }
        ObservedExchange beyond = arriving(Direction.OUTBOUND, 1, TracePropagation.UNDECIDED);
        assertThat(s.decide(beyond, T0)).isEqualTo(TraceSampler.NONE);
        assertThat(beyond.isSampled()).isFalse();
        assertThat(beyond.sampled).isEqualTo(TracePropagation.NOT_SAMPLED);
        // A tenth of a second later, one token more (10 a second), and only one.
        assertThat(root(s, T0 + SECOND / 10)).isEqualTo(TraceSampler.RESERVOIR);
        assertThat(root(s, T0 + SECOND / 10)).isEqualTo(TraceSampler.NONE);
        // An idle minute refills a second's worth, not a minute's.
        int taken = 0;
        while (root(s, T0 + 60 * SECOND) == TraceSampler.RESERVOIR) {
            taken++;
        }
        assertThat(taken).isEqualTo(10);
    }

    @Test
    void beyondTheReservoirTheRatioDecidesAndAtOneSamplesEverything() {
        TraceSampler all = new TraceSampler(1, 1.0, T0);
        assertThat(root(all, T0)).isEqualTo(TraceSampler.RESERVOIR);
        for (int i = 0; i < 100; i++) {
            assertThat(root(all, T0)).isEqualTo(TraceSampler.RATIO);
        }
        TraceSampler half = new TraceSampler(0, 0.5, T0);
        int sampled = 0;
        for (int i = 0; i < 4_000; i++) {
            sampled += root(half, T0) == TraceSampler.RATIO ? 1 : 0;
        }
        assertThat(sampled).isBetween(1_700, 2_300); // binomial(4000, 0.5): 9 standard deviations either side
    }

    @Test
    void aMeshPeersDecisionIsHonouredWithoutATokenEitherWay() {
        TraceSampler s = new TraceSampler(0, 0.0, T0);
        ObservedExchange yes = arriving(Direction.INBOUND, 42, TracePropagation.SAMPLED);
        assertThat(s.decide(yes, T0)).isEqualTo(TraceSampler.PEER);
        assertThat(yes.isSampled()).isTrue();
        ObservedExchange no = arriving(Direction.INBOUND, 43, TracePropagation.NOT_SAMPLED);
        assertThat(s.decide(no, T0)).isEqualTo(TraceSampler.NONE);
        // With no decision, a peer's request (a caller outside Weft on the inbound port) starts a trace here.
        assertThat(s.decide(arriving(Direction.INBOUND, 44, TracePropagation.UNDECIDED), T0))
                .isEqualTo(TraceSampler.NONE);
    }

    @Test
    void anOutsideCallersYesTakesAReservoirTokenAndBeyondItIsDecidedLikeANewTrace() {
        TraceSampler s = new TraceSampler(2, 0.0, T0);
        assertThat(s.decide(arriving(Direction.OUTBOUND, 5, TracePropagation.SAMPLED), T0)).isEqualTo(TraceSampler.CALLER);
        assertThat(root(s, T0)).isEqualTo(TraceSampler.RESERVOIR); // the same reservoir as new traces
        ObservedExchange capped = arriving(Direction.OUTBOUND, 6, TracePropagation.SAMPLED);
        assertThat(s.decide(capped, T0)).isEqualTo(TraceSampler.NONE);
        assertThat(capped.isSampled()).isFalse();
        assertThat(s.callersCapped()).isEqualTo(1);
        // A "no" from outside costs nothing and is honoured.
        assertThat(s.decide(arriving(Direction.OUTBOUND, 7, TracePropagation.NOT_SAMPLED), T0))
                .isEqualTo(TraceSampler.NONE);
    }

    @Test
    void theAppsCallsInATraceTakenInSampledAreContinuedBeyondTheReservoirUpToAFanOut() {
        TraceSampler s = new TraceSampler(0, 0.0, T0);
        long trace = 0x5eed5eed5eedL;
        s.decide(arriving(Direction.INBOUND, trace, TracePropagation.SAMPLED), T0);
        for (int i = 0; i < TraceSampler.MAX_CONTINUATIONS; i++) {
            assertThat(s.decide(arriving(Direction.OUTBOUND, trace, TracePropagation.SAMPLED), T0))
                    .as("call %d of the app in the trace", i).isEqualTo(TraceSampler.PEER);
        }
        assertThat(s.decide(arriving(Direction.OUTBOUND, trace, TracePropagation.SAMPLED), T0))
                .as("an app reusing one sampled trace id for everything").isEqualTo(TraceSampler.NONE);
        assertThat(s.decide(arriving(Direction.OUTBOUND, trace + 1, TracePropagation.SAMPLED), T0))
                .as("a trace this sidecar never took in").isEqualTo(TraceSampler.NONE);
    }

    @Test
    void failedExchangesSpansHaveAReservoirOfTheirOwn() {
        TraceSampler s = new TraceSampler(3, 0.0, T0);
        for (int i = 0; i < 3; i++) {
            assertThat(root(s, T0)).isEqualTo(TraceSampler.RESERVOIR);
        }
        assertThat(s.exportError(T0)).isTrue(); // the new traces took every token of theirs, none of these
        assertThat(s.exportError(T0)).isTrue();
        assertThat(s.exportError(T0)).isTrue();
        assertThat(s.exportError(T0)).isFalse();
        assertThat(s.exportError(T0 + SECOND)).isTrue();
        assertThat(new TraceSampler(0, 1.0, T0).exportError(T0)).isFalse();
    }
}
