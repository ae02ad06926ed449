package dev.weft.dataplane.transport;

import java.time.Duration;

/**
 * A timeout on every phase of a connection, so that no phase can hold one for ever (issue 16). On an HTTP/1.1
 * listener: the request head, from its first byte to its end ({@code --request-head-timeout}, kept by
 * {@code http/Http1RequestDecoder}); the wait for the next request ({@code --idle-timeout}) and the request body's
 * progress ({@code --body-timeout}), kept by {@code downstream/Http1Downstream}. Towards the app (and {@code http1}
 * peers), the answer body's progress, also {@code --body-timeout} ({@code upstream/HttpUpstream}). Zero turns one off.
 *
 * @param requestHead longest from a request head's first byte to its end (408 {@code request-timeout})
 * @param idle        longest a client connection may wait, with no request in progress, for the next one (closed)
 * @param body        longest a body, the client's request or the app's answer, may go without a byte
 */
public record ConnectionTimeouts(Duration requestHead, Duration idle, Duration body) {
    /** No timeout at all: for tests of other things. */
    public static final ConnectionTimeouts NONE = new ConnectionTimeouts(Duration.ZERO, Duration.ZERO, Duration.ZERO);

    public ConnectionTimeouts {
        check("requestHeadTimeout", requestHead);
        check("idleTimeout", idle);
        check("bodyTimeout", body);
    }

    public ConnectionTimeouts requestHead(Duration d) {
        return new ConnectionTimeouts(d, idle, body);
    }

    public ConnectionTimeouts idle(Duration d) {
        return new ConnectionTimeouts(requestHead, d, body);
    }

    public ConnectionTimeouts body(Duration d) {
        return new ConnectionTimeouts(requestHead, idle, d);
    }

    private static void check(String name, Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " " + d + " is negative (expected a duration, or zero for no limit)");
        }
    }
}
