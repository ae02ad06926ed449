package dev.weft.dataplane.downstream;

import dev.weft.dataplane.exchange.Downstream;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.PolicyStack;
import dev.weft.dataplane.exchange.ProxyExchange;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.resilience.Deadlines;
import dev.weft.dataplane.security.PeerIdentity;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;

import java.nio.charset.StandardCharsets;

/**
 * A WMP stream from a peer sidecar as the {@link Downstream} of its exchange (the provider side): the REQUEST frame
 * becomes the exchange's head and first body piece, DATA frames the rest, and the answer goes back as a RESPONSE
 * frame (with its first body piece: one frame for a small answer) and DATA frames, under the stream's flow control.
 * A REQUEST that {@link WmpRequestValidator} refuses resets its stream instead and opens no exchange.
 *
 * <p>Thread: the mesh connection's Worker loop (the app connection is on the same loop). Buffers: the REQUEST
 * frame's body and DATA frames' bodies are given to the exchange, which owns them from then on; answer bodies given
 * here are sent on the stream (the WMP encoder releases them).
 */
public final class WmpDownstream implements Downstream, MeshStream.Listener {
    private final MeshStream stream;
    private final EventLoop loop;
    private ProxyExchange exchange;
    /** The peer sent the request's last frame. */
    private boolean requestEnded;
    /** Answer bytes sent while the stream had no window: credited to the app's connection once it has. */
    private int pendingConsumed;
    /** Body bytes the request's content-length still expects, or -1 without one (see WmpRequestValidator). */
    private long bodyLeft;
    private Rejections rejected;

    private WmpDownstream(MeshStream stream, EventLoop loop) {
        this.stream = stream;
        this.loop = loop;
    }

    /**
     * The acceptor of a provider-side mesh connection: one exchange per stream on {@code stack}.
     *
     * @param peer the connection's remote address, made once per connection
     */
    public static MeshSession.Acceptor acceptor(PolicyStack stack, EventLoop loop, String peer) {
        return acceptor(stack, loop, peer, null);
    }

    /**
     * The acceptor of a provider-side mesh connection whose peer proved who it is (mTLS): each request's
     * {@code x-weft-caller} is the certificate's service, whatever the peer wrote there: the one place every phase,
     * the trace and the app read the caller from.
     *
     * @param caller the peer's verified identity, or null on a plaintext connection (the header is then as sent)
     */
    public static MeshSession.Acceptor acceptor(PolicyStack stack, EventLoop loop, String peer, PeerIdentity caller) {
        return (stream, request) -> {
            WmpBoundary.Refusal bad = WmpRequestValidator.check(request);
            if (bad != null) {
                WmpRequestValidator.refuse(stream, request, bad, stack.metrics().rejected, peer);
                return null; // the stream is reset; late frames for it are dropped
            }
            WmpDownstream d = new WmpDownstream(stream, loop);
            d.bodyLeft = WmpRequestValidator.bodyLeft(request);
            d.rejected = stack.metrics().rejected;
            d.start(stack, request, peer, caller);
            return d;
        };
    }

    private void start(PolicyStack stack, WmpRequest r, String peer, PeerIdentity caller) {
        RequestHead head = new RequestHead(r.method(), r.authority(), r.path(), r.headers());
        head.traceparent(r.traceparent());
        if (caller != null) {
            // Before the exchange opens: every phase, the trace and the app read the one verified caller.
            head.fields().set(Deadlines.CALLER_HEADER, caller.service());
        }
        ProxyExchange x = stack.open(this, head, peer, null);
        exchange = x;
        requestEnded = r.endStream();
        x.onRequestBody(r.body(), r.endStream());
        x.carry(); // a phase may answer at once: done() then runs before this returns
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    // ---- MeshStream.Listener: what the peer sends ----

    @Override
    public void onData(WmpData data) {
        requestEnded |= data.endStream();
        if (bodyLeft >= 0 && WmpRequestValidator.bodyOverrun(bodyLeft -= data.body().readableBytes(), data.endStream())) {
            refuseBody(data);
            return;
        }
        if (exchange == null) {
            data.release();
            return;
        }
        exchange.onRequestBody(data.body(), data.endStream());
    }

    /** The body broke its content-length: reset the stream and end the app's call (its connection closes). */
    private void refuseBody(WmpData data) {
        WmpRequestValidator.refuse(stream, data, new WmpBoundary.Refusal(Rejections.Reason.BAD_CONTENT_LENGTH,
                "body bytes past or short of content-length"), rejected, stream.session().peer());
        if (exchange != null) {
            exchange.abort(400, "bad-request"); // the peer's body broke its content-length
        }
    }

    @Override
    public void onWritable() {
        // The stream has window again: the app's connection may send more of the answer.
        if (exchange != null && pendingConsumed > 0) {
            int n = pendingConsumed;
            pendingConsumed = 0;
            exchange.answerConsumed(n);
        }
        if (exchange != null) {
            exchange.onWritable();
        }
    }

    @Override
    public void onReset(String reason, boolean refused) {
        if (exchange != null) {
            // The peer cancelled (its deadline, its client gone): stop the app's work now.
            exchange.abort(499, "downstream-closed");
        }
    }

    // ---- Downstream: what the exchange sends back ----

    @Override
    public void answer(ProxyExchange x, ResponseHead head, ByteBuf body, boolean end) {
        WmpHeaders fields = head.fields();
        // An app's answer must never tell the caller's sidecar that it is safe to send the request again.
        fields.remove(Deadlines.UNPROCESSED_HEADER);
        int n = body.readableBytes();
        stream.sendHead(new WmpResponse(stream.id(), end, head.status(), fields, body), n, end);
        if (!end) {
            credit(x, n);
        }
    }

    @Override
    public void answerData(ProxyExchange x, ByteBuf body, boolean end) {
        int n = body.readableBytes();
        stream.sendData(body, end);
        if (!end) {
            credit(x, n);
        }
    }

    /** The answer bytes went into the stream: let the app send more while the stream has window, else wait. */
    private void credit(ProxyExchange x, int n) {
        if (stream.canSend()) {
            x.answerConsumed(n);
        } else {
            pendingConsumed += n;
            stream.awaitWritable();
        }
    }

    @Override
    public void answerError(ProxyExchange x, ExchangeError e, boolean skipRest) {
        if (stream.isClosed()) {
            return;
        }
        String message = e.getMessage();
        ByteBuf body = stream.session().channel().alloc().buffer(message.length() + 1);
        body.writeCharSequence(message + "\n", StandardCharsets.UTF_8);
        WmpHeaders h = new WmpHeaders(4).add("content-type", "text/plain").add("x-weft-error", e.kind());
        if (e.retryAfterSeconds() > 0) {
            h.add("retry-after", Long.toString(e.retryAfterSeconds()));
        }
        if (e.unprocessed()) {
            h.add(Deadlines.UNPROCESSED_HEADER, "true"); // the caller's sidecar may retry it elsewhere
        }
        stream.sendHead(new WmpResponse(stream.id(), true, e.status(), h, body), body.readableBytes(), true);
        if (!requestEnded) {
            stream.cancel(WmpError.NO_ERROR); // the rest of the body is not wanted
        }
    }

    @Override
    public void abortAnswer(ProxyExchange x) {
        stream.cancel(WmpError.INTERNAL_ERROR); // the app's answer was cut short: the only honest signal left
    }

    @Override
    public void pauseRequest() {
        // Nothing to do: the peer cannot send past the stream's window, which bounds what is held.
    }

    @Override
    public void requestConsumed(int bytes) {
        if (bytes > 0 && !stream.isClosed()) {
            stream.consumed(bytes);
        }
    }

    @Override
    public void done(ProxyExchange x, boolean close) {
        exchange = null; // the stream ends with its last frame; the connection carries on
    }
}
