package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;

/**
 * Weft's own answer head: a status and the header fields as a WMP header list (names lower case), whichever wire it
 * came from or goes to. The HTTP/1.1 answer decoder ({@link Http1ResponseDecoder}) and WMP's RESPONSE frames produce
 * it; {@link Http1Writer} and the WMP encoder write it.
 *
 * <p>Thread: one Worker loop at a time; not thread safe.
 */
public final class ResponseHead {
    private final int status;
    private final WmpHeaders fields;
    private boolean keepAlive = true;

    /** @param fields the header fields, names lower case; owned by this head from now on */
    public ResponseHead(int status, WmpHeaders fields) {
        this.status = status;
        this.fields = fields;
    }

    public int status() {
        return status;
    }

    public WmpHeaders fields() {
        return fields;
    }

    public String get(String lowerName) {
        return fields.get(lowerName);
    }

    /** HTTP/1.1 only: whether the connection it came on may carry another request (false for Connection: close). */
    public boolean keepAlive() {
        return keepAlive;
    }

    public ResponseHead keepAlive(boolean keepAlive) {
        this.keepAlive = keepAlive;
        return this;
    }

    @Override
    public String toString() {
        return status + " " + fields;
    }
}
