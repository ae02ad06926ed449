package dev.weft.dataplane.upstream;

import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.mesh.MeshPool;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.registry.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

/**
 * Requests to peer sidecars as WMP streams on {@link MeshPool}'s persistent connections (the default mesh link).
 * Thread: the Worker loop of the caller; the pool dials on that same loop.
 */
public final class WmpUpstream implements Upstream {
    private final MeshPool pool;

    public WmpUpstream(MeshPool pool) {
        this.pool = pool;
    }

    @Override
    public Future<UpstreamCall> open(EventLoop loop, Endpoint endpoint, String address, UpstreamListener listener) {
        Future<MeshSession> session = pool.session(loop, endpoint.host(), endpoint.port(), address);
        if (session.isSuccess()) {
            return loop.newSucceededFuture(new Call(session.getNow(), listener)); // the usual case: a live session
        }
        Promise<UpstreamCall> p = loop.newPromise();
        session.addListener((Future<MeshSession> f) -> {
            if (f.isSuccess()) {
                p.setSuccess(new Call(f.getNow(), listener));
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
     */
    private static final class Call implements UpstreamCall, MeshStream.Listener {
        private final MeshSession session;
        private final UpstreamListener listener;
        private MeshStream stream;
        private boolean cancelled;

        Call(MeshSession session, UpstreamListener listener) {
            this.session = session;
            this.listener = listener;
        }

        @Override
        public void sendHead(RequestHead head, String authority, String clientAddress, ByteBuf body, boolean endStream) {
            if (cancelled || !session.isUsable()) {
                body.release();
                if (!cancelled) {
                    listener.onReset("connection to " + session.peer() + " closed before the request was sent", true);
                }
                return;
            }
            stream = session.openStream();
            stream.listener(this);
            stream.sendHead(new WmpRequest(stream.id(), endStream, head.method(), authority, head.path(),
                    ProxyHeaders.forward(head.fields(), true, clientAddress), body), body.readableBytes(), endStream);
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
            listener.onResponseHead(new ResponseHead(r.status(), r.headers()), r.body(), r.endStream());
        }

        @Override
        public void onData(WmpData data) {
            listener.onResponseData(data.body(), data.endStream());
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
