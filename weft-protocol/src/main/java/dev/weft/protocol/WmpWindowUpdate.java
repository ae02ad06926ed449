package dev.weft.protocol;

/**
 * Flow-control credit: the receiver of a stream's body grants the sender {@code increment} more body bytes.
 * Keeps one large or slow body from filling a shared connection's buffers (see docs/protocol.md).
 */
public record WmpWindowUpdate(int streamId, int increment) implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return WmpFrameType.WINDOW_UPDATE;
    }
}
