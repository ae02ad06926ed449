package dev.weft.dataplane.upstream;

import io.netty.buffer.ByteBuf;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.http.RequestHead;

/**
 * One request/response on an upstream connection. Methods run on the owning Worker loop.
 * Buffers: every {@code ByteBuf} passed in is owned by the call from then on (it is written, then released by the
 * encoder, or released if the call is already over).
 */
public interface UpstreamCall {

    /**
     * Sends the request head as received from the caller (Host travels as {@code authority}); the call applies the
     * proxy header rules to its fields ({@code ProxyHeaders.forwardRequest}, in place and once per exchange, so a
     * retry's head is not edited twice) and writes them in its own wire format. {@code clientAddress} goes into
     * X-Forwarded-For (null when the caller is itself a proxy hop that already added it). {@code body} is the first
     * chunk, or the whole body when {@code endStream}.
     *
     * @throws ExchangeError when this link cannot carry the head (more fields or bytes than the peer accepts); nothing
     *                       was sent and {@code body} is released
     */
    void sendHead(RequestHead head, String authority, String clientAddress, ByteBuf body, boolean endStream)
            throws ExchangeError;

    void sendData(ByteBuf body, boolean endStream);

    /** Whether more request body may be sent now (flow-control credit left and the socket not backed up). */
    boolean canSend();

    /** Asks for {@link UpstreamListener#onWritable()} once {@link #canSend()} may be true again. */
    void awaitWritable();

    /** The caller has passed {@code bytes} of the answer's body on: the upstream may send that much more. */
    void consumed(int bytes);

    /** Abandons the call and frees the upstream's slot at once (WMP CANCEL; for HTTP/1.1, closing the connection). */
    void cancel();

    /** Bytes this call's connection sent and received on the wire so far (for per-request protocol cost). */
    default long wireBytes() {
        return -1;
    }
}
