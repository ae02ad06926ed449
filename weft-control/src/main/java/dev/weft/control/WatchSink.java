package dev.weft.control;

/**
 * Where the store pushes a watched service's snapshots. Called on the store thread, so implementations only hand
 * the line over (to a channel's event loop) and never block.
 */
interface WatchSink {
    /** @param line one complete NDJSON line; the sink owns the array from here on */
    void send(byte[] line);
}
