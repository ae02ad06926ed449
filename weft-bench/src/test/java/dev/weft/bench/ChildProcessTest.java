package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ChildProcessTest {
    @Test
    void namesThePortALogReportsAsAlreadyInUse() {
        List<String> log = List.of("starting sidecar",
                "java.net.BindException: Address already in use: 127.0.0.1:40002",
                "\tat sun.nio.ch.Net.bind0(Native Method)");

        assertThat(ChildProcess.bindDiagnosis(log, List.of(40001, 40002)))
                .isEqualTo("It could not bind 127.0.0.1:40002: another process took the port after the demo "
                        + "picked it; run again.");
    }

    @Test
    void listsAllItsPortsWhenTheLogDoesNotSayWhichOne() {
        List<String> log = List.of("io.netty.channel.unix.Errors$NativeIoException: bind(..) failed: Address already in use");

        assertThat(ChildProcess.bindDiagnosis(log, List.of(40001, 40002)))
                .contains("127.0.0.1:40001, 127.0.0.1:40002");
    }

    @Test
    void saysNothingAboutPortsWhenTheFailureIsSomethingElse() {
        assertThat(ChildProcess.bindDiagnosis(List.of("Exception: no such registry"), List.of(40001))).isNull();
    }
}
