package dev.weft.dataplane.exchange;

import dev.weft.dataplane.http.ResponseHead;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;

/**
 * The caller's side of one exchange, as {@link ProxyExchange} sees it: an HTTP/1.1 connection from the app
 * ({@code downstream/Http1Downstream}) or a WMP stream from a peer sidecar ({@code downstream/WmpDownstream}). The
 * exchange decides; the downstream only speaks its wire format. This is what removes the direction branches.
 *
 * <p>Thread: every method runs on the exchange's Worker loop. Buffers: every {@code ByteBuf} passed in is owned by
 * the downstream from then on (written, then released by the channel, or released).
 */
public interface Downstream {

    EventLoop loop();

    /** The answer's head with its first body bytes ({@code end}: the whole answer). */
    void answer(ProxyExchange x, ResponseHead head, ByteBuf body, boolean end);

    /**
     * More of the answer's body. Once the bytes are taken (written to the socket, or into the stream's window) the
     * downstream calls {@link ProxyExchange#answerConsumed(int)} so that the upstream may send more.
     */
    void answerData(ProxyExchange x, ByteBuf body, boolean end);

    /**
     * The mesh's own answer. {@code skipRest}: what is left of the request body, if any, may be read and dropped
     * (the whole body was read, or none of it went upstream); otherwise the connection cannot carry another request
     * (HTTP/1.1 closes it; a WMP stream is cancelled whenever its body is still coming).
     */
    void answerError(ProxyExchange x, ExchangeError error, boolean skipRest);

    /** The answer had started and cannot be completed: signal truncation (HTTP/1.1 closes; WMP resets the stream). */
    void abortAnswer(ProxyExchange x);

    /** Stop reading the request body for now: the upstream cannot take it yet. */
    void pauseRequest();

    /** {@code bytes} of request body went upstream and the upstream can take more: read on (or credit the peer). */
    void requestConsumed(int bytes);

    /**
     * The exchange is over (after the answer's last byte or error). {@code close}: the connection cannot carry another
     * request (HTTP/1.1: truncated answer, or {@code Connection: close}). A request body still coming is not a reason:
     * the downstream drops the rest of it as it comes, then serves the next request.
     */
    void done(ProxyExchange x, boolean close);
}
