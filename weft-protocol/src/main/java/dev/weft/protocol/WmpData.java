package dev.weft.protocol;

import io.netty.buffer.ByteBuf;

/** A body continuation: one bounded chunk of a request or response body. */
public record WmpData(int streamId, boolean endStream, ByteBuf body) implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return WmpFrameType.DATA;
    }

    @Override
    public void release() {
        body.release();
    }
}
