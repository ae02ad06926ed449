package dev.weft.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LeakRecorderTest {

    @Test
    void aBufferDroppedWithoutReleaseIsReportedAsALeak() {
        leakOne();
        List<String> leaks = List.of();
        for (int i = 0; i < 20 && leaks.isEmpty(); i++) {
            leaks = LeakRecorder.drain();
        }
        assertThat(leaks).isNotEmpty();
        assertThat(leaks.getFirst()).startsWith("LEAK: ");
    }

    @Test
    void releasedBuffersAreNotReported() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        b.writeInt(1);
        b.release();
        assertThat(LeakRecorder.drain()).isEmpty();
    }

    private static void leakOne() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        b.writeInt(42); // dropped on purpose, never released
    }
}
