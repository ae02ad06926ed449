package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class JitSettleTest {
    /** A meter whose readings advance by the next step's figures each time a step runs. */
    private static final class Script implements JitSettle.Meter, JitSettle.Step {
        private final long[][] steps; // {cpu, jit} per step
        private final AtomicInteger ran = new AtomicInteger();
        private long cpu = 1_000;
        private long jit;

        Script(long initialJit, long[]... steps) {
            this.jit = initialJit;
            this.steps = steps;
        }

        @Override
        public long cpuNanos() {
            return cpu;
        }

        @Override
        public long jitNanos() {
            return jit;
        }

        @Override
        public void run() {
            long[] s = steps[Math.min(ran.getAndIncrement(), steps.length - 1)];
            cpu += s[0];
            jit += s[1];
        }
    }

    @Test
    void stepsUntilTheJitsShareOfTheProxiesCpuFallsUnderFivePercent() throws InterruptedException {
        Script s = new Script(500, new long[] {100, 60}, new long[] {100, 20}, new long[] {100, 4}, new long[] {100, 90});
        JitSettle.Outcome o = JitSettle.run(s, Duration.ofMinutes(5), s);
        assertThat(s.ran.get()).isEqualTo(3);
        assertThat(o.capped()).isFalse();
        assertThat(o.lastShare()).isEqualTo(0.04);
        assertThat(o.describe()).contains("settled");
    }

    @Test
    void stopsAtTheCapAndSaysTheJitWasStillBusy() throws InterruptedException {
        Script s = new Script(500, new long[] {100, 50});
        JitSettle.Outcome o = JitSettle.run(s, Duration.ofNanos(1), s);
        assertThat(s.ran.get()).isEqualTo(1);
        assertThat(o.capped()).isTrue();
        assertThat(o.lastShare()).isEqualTo(0.5);
        assertThat(o.describe()).contains("still busy at the cap");
    }

    @Test
    void runsNoLoadForProxiesWithoutAJitOrWithoutACap() throws InterruptedException {
        Script nativeProxy = new Script(0, new long[] {100, 0});
        assertThat(JitSettle.run(nativeProxy, Duration.ofMinutes(2), nativeProxy)).isEqualTo(JitSettle.Outcome.NONE);
        Script jvm = new Script(500, new long[] {100, 50});
        assertThat(JitSettle.run(jvm, Duration.ZERO, jvm)).isEqualTo(JitSettle.Outcome.NONE);
        assertThat(nativeProxy.ran.get() + jvm.ran.get()).isZero();
    }
}
