package dev.weft.dataplane.mesh;

import dev.weft.protocol.WmpPing;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The heartbeat on a WMP connection: a PING after each 10 s with nothing read, the connection closed after three
 * such periods, and anything read restarting the count. Netty's embedded channel with a frozen clock stands in for
 * 30 s of waiting; the session and the idle detector are the production ones.
 */
class MeshSessionHeartbeatTest {
    private static final long PERIOD = MeshSession.HEARTBEAT_SECONDS;

    private static EmbeddedChannel connection() {
        EmbeddedChannel ch = EmbeddedChannel.builder().build();
        ch.freezeTime();
        ch.pipeline().addLast(MeshSession.heartbeat(), new MeshSession((stream, request) -> null, "peer"));
        return ch;
    }

    private static void silence(EmbeddedChannel ch, long seconds) {
        ch.advanceTimeBy(seconds, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
    }

    @Test
    void pingsAfterEachSilentPeriodAndClosesAfterThree() {
        EmbeddedChannel ch = connection();
        silence(ch, PERIOD);
        assertThat((Object) ch.readOutbound()).isInstanceOf(WmpPing.class);
        assertThat(ch.isOpen()).isTrue();
        silence(ch, PERIOD);
        assertThat((Object) ch.readOutbound()).isInstanceOf(WmpPing.class);
        assertThat(ch.isOpen()).isTrue();
        silence(ch, PERIOD);
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void anythingReadRestartsTheCount() {
        EmbeddedChannel ch = connection();
        silence(ch, PERIOD);
        silence(ch, PERIOD);
        assertThat(ch.outboundMessages()).hasSize(2);
        ch.writeInbound(new WmpPing(1, true)); // the peer's PONG
        silence(ch, PERIOD);
        silence(ch, PERIOD);
        assertThat(ch.isOpen()).isTrue();
        silence(ch, PERIOD);
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void writingDoesNotCountAsHearingFromThePeer() {
        EmbeddedChannel ch = connection();
        for (int i = 0; i < 3; i++) {
            ch.writeOutbound(new WmpPing(100 + i, false)); // our own traffic, unanswered
            silence(ch, PERIOD);
        }
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }
}
