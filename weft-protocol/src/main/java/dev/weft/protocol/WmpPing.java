package dev.weft.protocol;

/** Heartbeat. A PING is answered with a PONG ({@code ack = true}) carrying the same opaque payload. */
public record WmpPing(long payload, boolean ack) implements WmpFrame {
    @Override
    public WmpFrameType type() {
        return ack ? WmpFrameType.PONG : WmpFrameType.PING;
    }

    @Override
    public int streamId() {
        return 0;
    }
}
