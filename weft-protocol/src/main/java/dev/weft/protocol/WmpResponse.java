package dev.weft.protocol;

import io.netty.buffer.ByteBuf;

/** Answers the request on the same stream. When {@code endStream} is false, {@link WmpData} frames follow. */
public record WmpResponse(int streamId, boolean endStream, int status, WmpHeaders headers, ByteBuf body)
        implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return WmpFrameType.RESPONSE;
    }

    @Override
    public void release() {
        body.release();
    }
}
