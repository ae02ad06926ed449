package dev.weft.protocol;

/**
 * Graceful drain or fatal error: the sender opens no new streams and accepts none above {@code lastStreamId};
 * streams at or below it are finished. {@code debug} is a short human-readable reason (may be empty).
 */
public record WmpGoAway(int lastStreamId, WmpError error, String debug) implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return WmpFrameType.GOAWAY;
    }

    @Override
    public int streamId() {
        return 0;
    }
}
