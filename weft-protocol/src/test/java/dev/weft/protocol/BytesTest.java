package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BytesTest {

    @Test
    void aSliceOfADirectBufferIsAppendedWholeAndTheDestinationGrows() {
        ByteBuf src = ByteBufAllocator.DEFAULT.directBuffer(64).writeBytes("--hello weft--".getBytes(StandardCharsets.US_ASCII));
        ByteBuf slice = src.retainedSlice(2, 10);
        ByteBuf dst = ByteBufAllocator.DEFAULT.directBuffer(4, 1024).writeBytes("ab".getBytes(StandardCharsets.US_ASCII));
        try {
            Bytes.append(dst, slice, slice.readerIndex() + 1, 9);
            assertThat(dst.toString(StandardCharsets.US_ASCII)).isEqualTo("abello weft");
            assertThat(slice.readerIndex()).isZero(); // the source is read, not consumed
        } finally {
            src.release();
            slice.release();
            dst.release();
        }
    }

    @Test
    void aHeapSourceIsCopiedTooAndABadRangeIsRefusedWithoutWriting() {
        ByteBuf src = Unpooled.copiedBuffer("xyz", StandardCharsets.US_ASCII);
        ByteBuf dst = ByteBufAllocator.DEFAULT.directBuffer(8);
        ByteBuf direct = ByteBufAllocator.DEFAULT.directBuffer(8).writeBytes(new byte[3]);
        try {
            Bytes.append(dst, src, 1, 2);
            assertThat(dst.toString(StandardCharsets.US_ASCII)).isEqualTo("yz");
            assertThatThrownBy(() -> Bytes.append(dst, direct, 6, 4)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(dst.readableBytes()).isEqualTo(2);
        } finally {
            src.release();
            dst.release();
            direct.release();
        }
    }
}
