package dev.weft.dataplane.inbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Exchange;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * The inbound path: one WMP stream from a peer sidecar, carried to the local app over a pooled HTTP/1.1
 * connection and answered back on the stream. The steps, run by the Collaborator: admit (one of the app's
 * {@code --capacity} slots, waiting in a bounded queue when all are taken: the app never sees more in flight),
 * connect (a keep-alive connection from {@link AppPool}), forward (request head and body to the app), await the
 * app's head, relay it as a RESPONSE frame; body chunks then stream both ways under WMP flow control.
 *
 * <p>Thread: the mesh connection's Worker loop (the app connection is on the same loop). Buffers: the REQUEST
 * frame's body and DATA frames are owned here until written to the app channel (the HTTP encoder releases them);
 * HTTP contents from the app are owned here until sent on the stream (the WMP encoder releases them).
 */
final class InboundExchange implements Exchange, MeshStream.Listener, AppConnection.Owner {
    private final MeshStream stream;
    private final EventLoop loop;
    private final Cluster app;
    private final AppPool appPool;
    private final SidecarMetrics metrics;
    private final TrafficMetrics traffic;
    private final long start = System.nanoTime();
    private final ArrayDeque<WmpData> pendingRequestBody = new ArrayDeque<>(0);
    private WmpRequest request;
    private boolean requestComplete;
    private EndpointState slot;
    private AppConnection conn;
    private Promise<Void> answered;
    private HttpResponse pendingHead;
    private boolean headSent;
    private boolean responseKeepAlive = true;
    private int status;
    private boolean finished;

    InboundExchange(MeshStream stream, WmpRequest request, EventLoop loop, Cluster app, AppPool appPool,
                    SidecarMetrics metrics) {
        this.stream = stream;
        this.request = request;
        this.loop = loop;
        this.app = app;
        this.appPool = appPool;
        this.metrics = metrics;
        this.traffic = metrics.inbound;
        this.requestComplete = request.endStream();
        traffic.started();
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    @Override
    public Future<?> admit() {
        return Exchange.onLoop(loop, () -> {
            Future<EndpointState> f = app.acquire(loop);
            f.addListener(x -> {
                if (x.isSuccess()) {
                    slot = f.getNow();
                    if (finished) {
                        releaseSlot();
                    }
                } else {
                    metrics.appRejectedAtCapacity.increment();
                }
            });
            return f;
        });
    }

    @Override
    public Future<?> connect() {
        return Exchange.onLoop(loop, () -> {
            if (finished) {
                return loop.newFailedFuture(new IllegalStateException("stream cancelled"));
            }
            Future<AppConnection> f = appPool.acquire(loop);
            f.addListener(x -> {
                if (x.isSuccess()) {
                    conn = f.getNow();
                    if (finished) {
                        conn.release(false);
                        conn = null;
                    } else {
                        conn.owner(this);
                    }
                }
            });
            return f;
        });
    }

    @Override
    public Future<?> forward() {
        return Exchange.onLoop(loop, () -> {
            if (finished) {
                return loop.newFailedFuture(new IllegalStateException("stream cancelled"));
            }
            answered = loop.newPromise();
            WmpRequest r = request;
            request = null;
            HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(r.method()), r.path());
            ProxyHeaders.toHttp(r.headers(), head.headers());
            head.headers().set(HttpHeaderNames.HOST, r.authority());
            if (r.endStream()) {
                if (!head.headers().contains(HttpHeaderNames.CONTENT_LENGTH) && r.body().isReadable()
                        || head.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
                    head.headers().set(HttpHeaderNames.CONTENT_LENGTH, r.body().readableBytes());
                }
            } else if (!head.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
                HttpUtil.setTransferEncodingChunked(head, true);
            }
            Channel ch = conn.channel();
            ch.write(head, ch.voidPromise());
            writeRequestBody(r.body(), r.endStream());
            WmpData d;
            while ((d = pendingRequestBody.poll()) != null) {
                writeRequestBody(d.body(), d.endStream());
            }
            return answered;
        });
    }

    /** Writes a request body chunk to the app; the peer gets credit back once the app's socket took it. */
    private void writeRequestBody(ByteBuf body, boolean end) {
        int n = body.readableBytes();
        traffic.bytesIn(n);
        Channel ch = conn.channel();
        HttpContent c = end ? new DefaultLastHttpContent(body) : new DefaultHttpContent(body);
        if (end) {
            ch.writeAndFlush(c, ch.voidPromise());
            return;
        }
        if (n == 0) {
            body.release();
            return;
        }
        ch.writeAndFlush(c).addListener(f -> {
            if (f.isSuccess()) {
                stream.consumed(n);
            }
        });
    }

    @Override
    public void onData(WmpData data) {
        if (finished) {
            data.release();
            return;
        }
        requestComplete |= data.endStream();
        if (request != null || conn == null) {
            pendingRequestBody.add(data); // not forwarded yet; bounded by the stream's flow-control window
        } else {
            writeRequestBody(data.body(), data.endStream());
        }
    }

    @Override
    public void onAppHead(HttpResponse response) {
        if (finished) {
            return;
        }
        pendingHead = response;
        status = response.status().code();
        responseKeepAlive = HttpUtil.isKeepAlive(response);
        answered.trySuccess(null);
    }

    @Override
    public void relay() {
        // The head goes out with the first body chunk (see onAppContent) so a small answer is one frame; if that
        // chunk is not here yet, onAppReadComplete sends the head alone.
    }

    @Override
    public void onAppContent(HttpContent content) {
        if (finished) {
            content.release();
            return;
        }
        boolean last = content instanceof LastHttpContent;
        ByteBuf body = content.content();
        traffic.bytesOut(body.readableBytes());
        if (!headSent) {
            sendHead(body, last);
        } else {
            stream.sendData(body, last);
        }
        if (last) {
            finish(true);
        } else if (!stream.canSend()) {
            conn.channel().config().setAutoRead(false);
            stream.awaitWritable();
        }
    }

    private void sendHead(ByteBuf body, boolean end) {
        HttpResponse h = pendingHead;
        pendingHead = null;
        headSent = true;
        WmpHeaders headers = ProxyHeaders.toWmp(h.headers(), false, null);
        int bytes = body.readableBytes();
        stream.sendHead(new WmpResponse(stream.id(), end, h.status().code(), headers, body), bytes, end);
    }

    @Override
    public void onAppReadComplete() {
        if (!finished && pendingHead != null && !headSent) {
            sendHead(Unpooled.EMPTY_BUFFER, false);
        }
    }

    @Override
    public void onWritable() {
        if (conn != null && !finished) {
            conn.channel().config().setAutoRead(true);
            conn.channel().read();
        }
    }

    @Override
    public void onAppWritable() {
        // Request body credit is returned on write completion, so nothing to resume here.
    }

    @Override
    public void onAppClosed() {
        if (finished) {
            return;
        }
        conn = null;
        if (!headSent) {
            fail(new AppPool.AppUnavailableException("app at " + appPool.address().getHostString() + ":"
                    + appPool.address().getPort() + " closed the connection before answering"));
        } else {
            // The answer was cut short: the only honest signal left is to reset the stream.
            metrics.streamsReset.increment();
            finished = true;
            stream.cancel(WmpError.INTERNAL_ERROR);
            releaseSlot();
            releasePending();
            traffic.finished(502, start, true);
        }
    }

    @Override
    public void onReset(String reason, boolean refused) {
        // The caller gave up (timeout, client gone): stop the work at the app and free its slot now.
        if (finished) {
            return;
        }
        finished = true;
        if (answered != null) {
            answered.tryFailure(new IllegalStateException(reason));
        }
        if (conn != null) {
            AppConnection c = conn;
            conn = null;
            c.release(false);
        }
        releaseSlot();
        releasePending();
        traffic.finished(499, start, false);
    }

    @Override
    public void fail(Throwable cause) {
        if (finished) {
            return;
        }
        finished = true;
        int code = cause instanceof Cluster.NoCapacityException ? 503 : 502;
        String kind = code == 503 ? "app-at-capacity" : "app-unavailable";
        String message = cause instanceof Cluster.NoCapacityException
                ? "app of this sidecar is at capacity: " + cause.getMessage()
                : cause.getMessage();
        ByteBuf body = stream.session().channel().alloc().buffer(message.length() + 1);
        body.writeCharSequence(message + "\n", StandardCharsets.UTF_8);
        WmpHeaders h = new WmpHeaders(3)
                .add("content-type", "text/plain")
                .add("x-weft-error", kind);
        if (!stream.isClosed()) {
            // The peer may still be sending the body; its remaining DATA frames are dropped by the session.
            stream.sendHead(new WmpResponse(stream.id(), true, code, h, body), body.readableBytes(), true);
            if (!requestComplete) {
                stream.cancel(WmpError.NO_ERROR);
            }
        } else {
            body.release();
        }
        if (conn != null) {
            AppConnection c = conn;
            conn = null;
            c.release(false);
        }
        releaseSlot();
        releasePending();
        traffic.finished(code, start, true);
    }

    private void finish(boolean ok) {
        finished = true;
        if (conn != null) {
            AppConnection c = conn;
            conn = null;
            c.release(ok && responseKeepAlive && requestComplete);
        }
        releaseSlot();
        releasePending();
        traffic.finished(status, start, false);
    }

    private void releaseSlot() {
        if (slot != null) {
            EndpointState s = slot;
            slot = null;
            app.release(s);
        }
    }

    private void releasePending() {
        if (request != null) {
            request.release();
            request = null;
        }
        WmpData d;
        while ((d = pendingRequestBody.poll()) != null) {
            d.release();
        }
    }
}
