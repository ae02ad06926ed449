package dev.weft.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Starts an exchange. Method and path are fields, not header text; {@code authority} is the destination service.
 * The body may be empty; when {@code endStream} is false more {@link WmpData} frames follow on the same stream.
 */
public record WmpRequest(int streamId, boolean endStream, String method, String authority, String path,
                         WmpHeaders headers, ByteBuf body) implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return WmpFrameType.REQUEST;
    }

    @Override
    public void release() {
        body.release();
    }
}
