package dev.weft.dataplane.upstream;

import dev.weft.dataplane.downstream.WmpAnswerValidator;
import dev.weft.dataplane.downstream.WmpBoundary.Refusal;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.mesh.MeshPool;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.Rejections;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.registry.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

/**
 * Requests to peer sidecars as WMP streams on {@link MeshPool}'s persistent connections (the default mesh link). Each
 * answer is held to {@link WmpAnswerValidator}'s rules before the exchange sees any of it: a peer's answer becomes the
 * client's HTTP/1.1, so one it could not carry safely resets its stream (the connection's other streams carry on).
 *
 * <p>Thread: the Worker loop of the caller; the pool dials on that same loop. Buffers: a request body given to a
 * call goes into a frame (the WMP encoder releases it); answer frames are handed to the exchange, which owns their
 * bodies, or released here when refused.
 */
public final class WmpUpstream implements Upstream {
    private final MeshPool pool;

    public WmpUpstream(MeshPool pool) {
        this.pool = pool;
    }

    @Override
    public Future<UpstreamCall> open(EventLoop loop, Endpoint endpoint, String address, UpstreamListener listener) {
        Future<MeshSession> session = pool.session(loop, endpoint.service(), endpoint.host(), endpoint.port(),
                address);
        if (session.isSuccess()) { // the usual case
            return loop.newSucceededFuture(new Call(session.getNow(), listener, pool.limits(), pool.rejected()));
        }
        Promise<UpstreamCall> p = loop.newPromise();
        session.addListener((Future<MeshSession> f) -> {
            if (f.isSuccess()) {
                p.setSuccess(new Call(f.getNow(), listener, pool.limits(), pool.rejected()));
            } else {
                p.setFailure(new ConnectException(f.cause().getMessage(), f.cause()));
            }
        });
        return p;
    }

    /**
     * One stream. Converts between Weft's heads and WMP frames; bodies pass through untouched.
     * The stream id is taken only when the head is sent: ids must rise in the order REQUEST frames go out, and with
     * the virtual-thread Collaborator the connect and forward steps of different exchanges interleave.
     * Package-private for the tests that drive it on an EmbeddedChannel.
     */
    static final class Call implements UpstreamCall, MeshStream.Listener {
        private final MeshSession session;
        private final UpstreamListener listener;
        private final WmpLimits limits;
        private final Rejections rejected;
        private MeshStream stream;
        private boolean cancelled;
        /** The request is a HEAD: its answer has no body. */
        private boolean toHead;
        /** The answer has no body in HTTP/1.1 (to a HEAD, a 204, a 304): bytes the peer sends with it are dropped. */
        private boolean dropBody;
        /** Answer body bytes its content-length still expects, or -1 for any number (see WmpAnswerValidator). */
        private long answerLeft = -1;

        Call(MeshSession session, UpstreamListener listener, WmpLimits limits, Rejections rejected) {
            this.session = session;
            this.listener = listener;
            this.limits = limits;
            this.rejected = rejected;
        }

        @Override
        public void sendHead(RequestHead head, String authority, String clientAddress, ByteBuf body, boolean endStream)
                throws ExchangeError {
            if (cancelled || !session.isUsable()) {
                body.release();
                if (!cancelled) {
                    listener.onReset("connection to " + session.peer() + " closed before the request was sent", true);
                }
                return;
            }
            WmpHeaders fields = ProxyHeaders.forwardRequest(head, clientAddress);
            checkFits(head, authority, fields, body);
            toHead = head.isHead();
            stream = session.openStream();
            stream.listener(this);
            stream.sendHead(new WmpRequest(stream.id(), endStream, head.method(), authority, head.path(), fields, body,
                    head.traceparent()), body.readableBytes(), endStream);
        }

        /**
         * A head the peer's decoder would refuse would make it close the whole connection, failing every other
         * request on it: such a request is refused here instead, alone (431), before anything is sent (or a stream id
         * taken).
         */
        private void checkFits(RequestHead head, String authority, WmpHeaders f, ByteBuf body) throws ExchangeError {
            // An upper bound (a char is at most 3 bytes of UTF-8, a length at most 3 bytes): only past it is the exact
            // size worth walking the fields for, which the usual head never is.
            Traceparent tp = head.traceparent();
            int fields = f.size() + (tp == null ? 0 : 1);
            int roughBlock = 3 * (head.path().length() + authority.length()) + 16
                    + (tp == null ? 0 : Traceparent.LENGTH + 2);
            for (int i = 0; i < f.size(); i++) {
                roughBlock += 3 * (f.name(i).length() + f.value(i).length()) + 6;
            }
            int block = roughBlock <= limits.maxHeaderBlockBytes() ? 0 : WmpFrameEncoder.headerBlockSize(
                    new WmpRequest(0, false, head.method(), authority, head.path(), f, body, tp));
            if (fields > limits.maxHeaderFields() || block > limits.maxHeaderBlockBytes()) {
                body.release();
                throw new ExchangeError(431, "headers-too-large", "request headers too large for the mesh link: "
                        + fields + " fields in " + (block > 0 ? block + " bytes" : "under " + roughBlock + " bytes")
                        + " (expected at most "
                        + limits.maxHeaderFields() + " fields and " + limits.maxHeaderBlockBytes() + " bytes, "
                        + "with the fields the mesh adds)", true);
            }
        }

        @Override
        public void sendData(ByteBuf body, boolean endStream) {
            if (stream == null || stream.isClosed()) {
                body.release();
                return;
            }
            stream.sendData(body, endStream);
        }

        @Override
        public boolean canSend() {
            return stream != null && !stream.isClosed() && stream.canSend();
        }

        @Override
        public void awaitWritable() {
            if (stream != null) {
                stream.awaitWritable();
            }
        }

        @Override
        public void consumed(int bytes) {
            if (stream != null) {
                stream.consumed(bytes);
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
            if (stream != null) {
                stream.cancel(WmpError.CANCELLED);
            }
        }

        @Override
        public void onHead(WmpFrame frame) {
            if (!(frame instanceof WmpResponse r)) {
                frame.release();
                return;
            }
            Refusal bad = WmpAnswerValidator.check(r, toHead);
            if (bad != null) {
                refuse(r, bad);
                return;
            }
            answerLeft = WmpAnswerValidator.bodyLeft(r, toHead);
            dropBody = WmpAnswerValidator.bodiless(r.status(), toHead);
            ByteBuf body = r.body();
            if (dropBody && body.isReadable()) {
                body.release();
                body = Unpooled.EMPTY_BUFFER;
            }
            listener.onResponseHead(new ResponseHead(r.status(), r.headers()), body, r.endStream());
        }

        @Override
        public void onData(WmpData data) {
            if (dropBody) {
                int n = data.body().readableBytes();
                data.release();
                stream.consumed(n); // passed on as far as it goes: to nowhere
                if (data.endStream()) {
                    listener.onResponseData(Unpooled.EMPTY_BUFFER, true);
                }
                return;
            }
            if (answerLeft >= 0) {
                // Checked before a byte is passed on: past its length, a body runs into the client's next answer.
                answerLeft -= data.body().readableBytes();
                Refusal bad = WmpAnswerValidator.checkData(answerLeft, data.endStream());
                if (bad != null) {
                    refuse(data, bad);
                    return;
                }
            }
            listener.onResponseData(data.body(), data.endStream());
        }

        /** The answer broke the rules: its stream is reset, and the exchange answers 502 or cuts what it relayed. */
        private void refuse(WmpFrame frame, Refusal bad) {
            WmpAnswerValidator.refuse(stream, frame, bad, rejected);
            listener.onError(WmpAnswerValidator.error(bad, session.peer()));
        }

        @Override
        public void onWritable() {
            listener.onWritable();
        }

        @Override
        public void onReset(String reason, boolean refused) {
            listener.onReset(reason, refused);
        }
    }
}
