package dev.weft.protocol;

/**
 * One frame of the Weft mesh protocol (WMP), as decoded from or encoded to a sidecar-to-sidecar connection.
 * The byte layout is specified in docs/protocol.md.
 *
 * <p>Ownership: frames that carry a body ({@link WmpRequest}, {@link WmpResponse}, {@link WmpData}) hold one
 * reference to it. Whoever receives such a frame from a pipeline owns that reference and must release it, either
 * by writing the frame (the encoder releases) or by calling {@link #release()}.
 */
public sealed interface WmpFrame permits WmpRequest, WmpResponse, WmpData, WmpPing, WmpCancel, WmpGoAway, WmpWindowUpdate {

    WmpFrameType type();

    /** Stream the frame belongs to; 0 for connection-level frames (ping, goaway, connection window). */
    int streamId();

    /** Releases the body this frame holds, if any. Safe to call on frames without a body. */
    default void release() {}
}
