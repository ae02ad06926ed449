package dev.weft.dataplane.upstream;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpResponse;

/**
 * What an upstream answers, delivered on the owning Worker loop. The listener owns every buffer it is given and must
 * write or release it; after passing answer body bytes on it calls {@link UpstreamCall#consumed(int)}.
 */
public interface UpstreamListener {

    /**
     * The answer's head, with its first body chunk (the whole body when {@code endStream}). Its headers are already
     * filtered for the next hop ({@code ProxyHeaders.forward}), unless {@link #filtersResponseHeaders()}.
     */
    void onResponseHead(HttpResponse head, ByteBuf body, boolean endStream);

    /**
     * True when this listener converts the answer's headers to another format anyway and applies the forwarding
     * rules in that same pass: an HTTP/1.1 upstream then hands over the head as it was received, instead of first
     * building a filtered copy (the provider side turns the app's answer into WMP, one copy instead of two).
     */
    default boolean filtersResponseHeaders() {
        return false;
    }

    void onResponseData(ByteBuf body, boolean endStream);

    /** Request body may flow again (see {@link UpstreamCall#awaitWritable()}). */
    void onWritable();

    /**
     * The call ended abnormally. {@code refused}: the upstream never started on it (a draining peer), so it is safe
     * to retry elsewhere; {@code answered}: whether part of an answer was already delivered.
     */
    void onReset(String reason, boolean refused);
}
