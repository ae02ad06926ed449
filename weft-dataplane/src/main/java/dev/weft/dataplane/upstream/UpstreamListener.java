package dev.weft.dataplane.upstream;

import io.netty.buffer.ByteBuf;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.http.ResponseHead;

/**
 * What an upstream answers, delivered on the owning Worker loop. The listener owns every buffer it is given and must
 * write or release it; after passing answer body bytes on it calls {@link UpstreamCall#consumed(int)}.
 */
public interface UpstreamListener {

    /**
     * The answer's head, with its first body chunk (the whole body when {@code endStream}). Its fields are already
     * filtered for the next hop ({@code ProxyHeaders.forwardAnswer}), and the listener owns them (it may edit them).
     */
    void onResponseHead(ResponseHead head, ByteBuf body, boolean endStream);

    void onResponseData(ByteBuf body, boolean endStream);

    /** Request body may flow again (see {@link UpstreamCall#awaitWritable()}). */
    void onWritable();

    /**
     * The call ended abnormally. {@code refused}: the upstream never started on it (a draining peer), so it is safe
     * to retry elsewhere. Whether part of an answer was already relayed is the exchange's own state, not this call's.
     */
    void onReset(String reason, boolean refused);

    /**
     * The upstream broke its protocol (a malformed answer): nothing more comes on this call, whose connection is
     * closed. {@code error} says what to answer if no answer has started yet.
     */
    void onError(ExchangeError error);
}
