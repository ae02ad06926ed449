package dev.weft.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Starts an exchange. Method and path are fields, not header text; {@code authority} is the destination service.
 * The body may be empty; when {@code endStream} is false more {@link WmpData} frames follow on the same stream.
 *
 * @param traceparent the request's W3C trace context held as numbers, or null: on the wire it is the
 *                    {@code traceparent} field, written after {@code headers} (see {@link Traceparent})
 */
public record WmpRequest(int streamId, boolean endStream, String method, String authority, String path,
                         WmpHeaders headers, ByteBuf body, Traceparent traceparent) implements WmpFrame {
    /** A request whose trace context, if any, is among its {@code headers}. */
    public WmpRequest(int streamId, boolean endStream, String method, String authority, String path,
                      WmpHeaders headers, ByteBuf body) {
        this(streamId, endStream, method, authority, path, headers, body, null);
    }

    @Override
    public WmpFrameType type() {
        return WmpFrameType.REQUEST;
    }

    @Override
    public void release() {
        body.release();
    }
}
