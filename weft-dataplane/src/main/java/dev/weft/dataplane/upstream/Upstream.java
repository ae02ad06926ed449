package dev.weft.dataplane.upstream;

import dev.weft.registry.Endpoint;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

/**
 * How an admitted request reaches the endpoint chosen for it: over WMP to a peer sidecar ({@link WmpUpstream}) or
 * over HTTP/1.1 ({@link HttpUpstream}: to the local app, or to a peer sidecar with {@code --mesh-protocol http1}).
 * The exchange ({@code exchange/ProxyExchange}) only sees this interface, so either side works with either link.
 *
 * <p>Thread: {@link #open} is called on the Worker loop that owns the caller's connection; the call it returns,
 * and every listener callback, stay on that loop.
 */
public interface Upstream {

    /**
     * The "connect" step: a call on a pooled connection to {@code endpoint}, on {@code loop}.
     *
     * @param address the endpoint's {@code host:port}, which keys the connection pools; the caller passes the one
     *                its {@code EndpointState} keeps, so a request does not build that String again
     */
    Future<UpstreamCall> open(EventLoop loop, Endpoint endpoint, String address, UpstreamListener listener);

    /**
     * The endpoint already has as many connections as its policy allows ({@code circuit-breaker.max-connections}):
     * failed fast without dialling. Nothing was sent, so the request may safely go to another endpoint, and the
     * endpoint is not to blame (not an outlier failure).
     */
    final class CircuitOpenException extends Exception {
        public CircuitOpenException(String message) {
            super(message, null, false, false);
        }
    }

    /** Dialling failed: nothing was sent, so the request may safely go to another endpoint. */
    final class ConnectException extends Exception {
        public ConnectException(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }
}
