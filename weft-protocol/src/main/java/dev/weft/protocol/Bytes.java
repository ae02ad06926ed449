package dev.weft.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;

/**
 * Copies a small body behind its head without garbage. Netty 4.2's default (adaptive) buffers copy another buffer's
 * bytes through a {@code java.nio.ByteBuffer} view of the source, a new object per copy: JFR put it at about 240
 * bytes per request in each sidecar, the largest single allocation site of the hot path. When both buffers expose
 * their native address (direct buffers with Unsafe, the sidecar's case) this copies memory to memory instead.
 *
 * <p>Thread: any; stateless. Buffers: neither is retained or released here.
 */
public final class Bytes {
    private Bytes() {}

    /** Appends {@code length} bytes of {@code src} from {@code index} to {@code dst}, which grows if it must. */
    public static void append(ByteBuf dst, ByteBuf src, int index, int length) {
        if (length == 0) {
            return;
        }
        dst.ensureWritable(length);
        if (dst.hasMemoryAddress() && src.hasMemoryAddress()) {
            if (index < 0 || length < 0 || index > src.capacity() - length) {
                throw new IndexOutOfBoundsException("index " + index + ", length " + length + " outside a buffer of "
                        + src.capacity() + " bytes"); // as writeBytes would refuse it
            }
            int at = dst.writerIndex();
            PlatformDependent.copyMemory(src.memoryAddress() + index, dst.memoryAddress() + at, length);
            dst.writerIndex(at + length);
        } else {
            dst.writeBytes(src, index, length);
        }
    }
}
