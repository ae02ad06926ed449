package dev.weft.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProcStatsTest {
    @Test
    void readsUserPlusSystemTicksEvenWhenTheCommandNameHasSpacesAndParentheses() {
        String stat = "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 12 0 5000 0 0";
        assertThat(ProcStats.parseCpuTicks(stat)).hasValue(287);
    }

    @Test
    void machineBusyLeavesOutIdleAndIowait() {
        ProcStats.MachineCpu before = ProcStats.parseMachineCpu("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n");
        ProcStats.MachineCpu after = ProcStats.parseMachineCpu("cpu  200 0 100 850 50 0 0 0 0 0\n");
        assertThat(before.busyTicks()).isEqualTo(150);
        assertThat(after.busySince(before)).isEqualTo(150.0 / 200.0);
    }

    @Test
    void readsPeakRssInBytes() {
        String status = "Name:\tjava\nVmPeak:\t 999 kB\nVmHWM:\t   51200 kB\nVmRSS:\t 40000 kB\n";
        assertThat(ProcStats.parseStatusKilobytes(status, "VmHWM")).hasValue(51200L * 1024);
        assertThat(ProcStats.parseStatusKilobytes(status, "VmSwap")).isEmpty();
    }

    @Test
    void seesThisProcess() {
        long self = ProcessHandle.current().pid();
        assertThat(ProcStats.treeCpuNanos(self)).isPositive();
        assertThat(ProcStats.treePeakRssBytes(self)).isPositive();
        assertThat(ProcStats.treeCpuNanos(Long.MAX_VALUE)).isZero();
        assertThat(ProcStats.machineCpu().totalTicks()).isPositive();
        assertThat(ProcStats.loadAverage()).isNotNaN();
    }

    @Test
    void tellsTheJitCompilerThreadsFromTheOthers() {
        assertThat(ProcStats.isJitThread("77 (C2 CompilerThre) S 1 2 3 0 -1 0 0 0 0 0 9 1 0 0 20 0 1 0 5 0 0")).isTrue();
        assertThat(ProcStats.isJitThread("78 (C1 CompilerThre) S 1 2 3 0 -1 0 0 0 0 0 9 1 0 0 20 0 1 0 5 0 0")).isTrue();
        assertThat(ProcStats.isJitThread("79 (weft-worker-3-1) S 1 2 3 0 -1 0 0 0 0 0 9 1 0 0 20 0 1 0 5 0 0")).isFalse();
        assertThat(ProcStats.isJitThread("80 (nginx) S 1 2 3 0 -1 0 0 0 0 0 9 1 0 0 20 0 1 0 5 0 0")).isFalse();
    }

    @Test
    void thisJvmHasCompiledSomethingByNowAndTheJitIsPartOfItsCpu() {
        long self = ProcessHandle.current().pid();
        long jit = ProcStats.treeJitCpuNanos(self);
        assertThat(jit).isPositive();
        assertThat(jit).isLessThanOrEqualTo(ProcStats.treeCpuNanos(self));
        assertThat(ProcStats.treeJitCpuNanos(Long.MAX_VALUE)).isZero();
    }
}
