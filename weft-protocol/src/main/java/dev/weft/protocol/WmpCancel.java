package dev.weft.protocol;

/** Abandons a stream (timeout, caller gone): the receiver stops work on it and frees its upstream slot. */
public record WmpCancel(int streamId, WmpError error) implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return WmpFrameType.CANCEL;
    }
}
