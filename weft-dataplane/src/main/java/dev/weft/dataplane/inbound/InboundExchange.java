package dev.weft.dataplane.inbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Exchange;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.mesh.MeshStream;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.metrics.TrafficMetrics;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.resilience.DeadlineTimer;
import dev.weft.dataplane.resilience.Deadlines;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.dataplane.upstream.UpstreamCall;
import dev.weft.dataplane.upstream.UpstreamListener;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The inbound path over WMP: one stream from a peer sidecar, carried to the local app and answered back on the
 * stream. The steps, run by the Collaborator: admit (one of the app's slots under its concurrency limit: learned
 * and shedding at once with 503 {@code inbound-limit} by default, or {@code --capacity} with a bounded queue; each
 * answer's latency feeds the learned limit), connect (a pooled keep-alive connection from the
 * app's {@link Upstream}), forward (head and body), await the app's head, relay it as a RESPONSE frame (with the first
 * body chunk: one frame for a small answer); body chunks then stream both ways under flow control.
 *
 * <p>Thread: the mesh connection's Worker loop (the app connection is on the same loop). Buffers: the REQUEST
 * frame's body and DATA frames are owned here until given to the app call; answer bodies from the app are owned here
 * until sent on the stream (the WMP encoder releases them).
 */
final class InboundExchange extends DeadlineTimer.Entry implements Exchange, MeshStream.Listener, UpstreamListener {
    private final MeshStream stream;
    private final EventLoop loop;
    private final Cluster app;
    private final Upstream appUpstream;
    private final SidecarMetrics metrics;
    private final TrafficMetrics traffic;
    private final long start = System.nanoTime();
    private final ExchangeTrace trace;
    private long bytesIn;
    private long bytesOut;
    private final ArrayDeque<WmpData> pendingRequestBody = new ArrayDeque<>(0);
    private WmpRequest request;
    private boolean requestComplete;
    private EndpointState slot;
    private UpstreamCall call;
    private Promise<Void> answered;
    private HttpResponse head;
    private ByteBuf headBody;
    private boolean headEnd;
    private boolean headSent;
    private int status;
    private boolean finished;
    private long sentNanos;
    private int inFlightAtSend;
    /** The app's port refused the dial: nothing reached the app. */
    private boolean dialRefused;

    InboundExchange(MeshStream stream, WmpRequest request, EventLoop loop, Cluster app, Upstream appUpstream,
                    SidecarMetrics metrics, ExchangeTrace trace) {
        this.trace = trace;
        this.stream = stream;
        this.request = request;
        this.loop = loop;
        this.app = app;
        this.appUpstream = appUpstream;
        this.metrics = metrics;
        this.traffic = metrics.inbound;
        this.requestComplete = request.endStream();
        traffic.started();
        // The caller's remaining budget (or this service's own policy timeout) bounds the app's time too.
        var route = app.policy().route(request.method(), request.path());
        var timeout = route != null ? route.policy().timeout() : app.policy().timeout();
        long deadline = Deadlines.deadline(start, timeout, request.headers().get(Deadlines.DEADLINE_HEADER));
        if (deadline != 0) {
            DeadlineTimer.of(loop).add(this, deadline);
        }
    }

    @Override
    protected void expired() {
        if (!finished && !headSent) {
            app.countTimeout();
            fail(new TimeoutException());
        }
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    @Override
    public Future<?> admit() {
        return Exchange.onLoop(loop, () -> {
            long wait = request == null ? 0 : app.checkRate(request.headers().get(Deadlines.CALLER_HEADER),
                    app.policy().route(request.method(), request.path()));
            if (wait != 0) {
                return loop.newFailedFuture(new RateLimitedException(wait));
            }
            Future<EndpointState> f = app.acquire(loop);
            f.addListener(x -> {
                if (x.isSuccess()) {
                    slot = f.getNow();
                    if (finished) {
                        releaseSlot();
                    } else {
                        trace.admitted(app.service(), slot.endpoint().id(), slot.address());
                    }
                } else if (!(x.cause() instanceof Cluster.ShedException)) {
                    metrics.appRejectedAtCapacity.increment(); // queue full or timed out; sheds have their own count
                }
            });
            return f;
        });
    }

    @Override
    public Future<?> connect() {
        return Exchange.onLoop(loop, () -> {
            if (finished || slot == null) {
                return loop.newFailedFuture(new IllegalStateException("stream cancelled"));
            }
            Future<UpstreamCall> f = appUpstream.open(loop, slot.endpoint(), slot.address(), this);
            f.addListener(x -> {
                if (x.isSuccess()) {
                    call = f.getNow();
                    trace.connected();
                    if (finished) {
                        call.cancel();
                        call = null;
                    }
                } else if (!(x.cause() instanceof Upstream.CircuitOpenException)) {
                    dialRefused = true;
                    metrics.appConnectFailures.increment();
                }
            });
            return f;
        });
    }

    @Override
    public Future<?> forward() {
        return Exchange.onLoop(loop, () -> {
            if (finished || call == null) {
                return loop.newFailedFuture(new IllegalStateException("stream cancelled"));
            }
            answered = loop.newPromise();
            WmpRequest r = request;
            request = null;
            HttpRequest h = ProxyHeaders.toHttpRequest(r.method(), r.path(), r.headers());
            traffic.bytesIn(r.body().readableBytes());
            bytesIn += r.body().readableBytes();
            sentNanos = System.nanoTime();
            inFlightAtSend = slot.inFlight();
            call.sendHead(h, r.authority(), null, r.body(), r.endStream());
            trace.sent();
            if (!r.endStream()) {
                creditAfterWrite(r.body().readableBytes());
            }
            WmpData d;
            while ((d = pendingRequestBody.poll()) != null) {
                sendRequestBody(d);
            }
            return answered;
        });
    }

    @Override
    public void onData(WmpData data) {
        if (finished) {
            data.release();
            return;
        }
        requestComplete |= data.endStream();
        if (request != null || call == null) {
            pendingRequestBody.add(data); // not forwarded yet; bounded by the stream's flow-control window
        } else {
            sendRequestBody(data);
        }
    }

    private void sendRequestBody(WmpData d) {
        int n = d.body().readableBytes();
        traffic.bytesIn(n);
        bytesIn += n;
        call.sendData(d.body(), d.endStream());
        if (!d.endStream()) {
            creditAfterWrite(n);
        }
    }

    /**
     * Returns flow-control credit to the peer for request body bytes. The HTTP call writes at once; when the app's
     * socket backs up, credit waits until it drains (see {@link #onWritable}), so a slow app slows the caller.
     */
    private void creditAfterWrite(int n) {
        if (n > 0) {
            if (call != null && call.canSend()) {
                stream.consumed(n);
            } else {
                uncredited += n;
                if (call != null) {
                    call.awaitWritable();
                }
            }
        }
    }

    private int uncredited;

    @Override
    public void onWritable() {
        // Either the app's socket drained (credit owed to the peer) or the stream has window again (resume the app).
        if (uncredited > 0 && call != null && call.canSend()) {
            int n = uncredited;
            uncredited = 0;
            stream.consumed(n);
        }
        if (call != null && pendingConsumed > 0) {
            int n = pendingConsumed;
            pendingConsumed = 0;
            call.consumed(n);
        }
    }

    private int pendingConsumed;

    @Override
    public void onResponseHead(HttpResponse h, ByteBuf body, boolean end) {
        if (finished) {
            body.release();
            return;
        }
        head = h;
        headBody = body;
        headEnd = end;
        status = h.status().code();
        if (slot != null) {
            // The app's latency teaches the inbound concurrency limit; a 503 from the app is it shedding itself.
            slot.recordLatency(System.nanoTime() - sentNanos, inFlightAtSend, status == 503);
        }
        trace.firstByte(status);
        answered.trySuccess(null);
    }

    @Override
    public boolean filtersResponseHeaders() {
        return true;
    }

    @Override
    public void relay() {
        if (finished || head == null) {
            return;
        }
        // The app's own head: filtered and converted in one pass (see filtersResponseHeaders).
        WmpHeaders headers = ProxyHeaders.toWmp(head.headers(), false, null);
        ByteBuf body = headBody;
        headBody = null;
        head = null;
        headSent = true;
        traffic.bytesOut(body.readableBytes());
        bytesOut += body.readableBytes();
        int n = body.readableBytes();
        stream.sendHead(new WmpResponse(stream.id(), headEnd, status, headers, body), n, headEnd);
        if (headEnd) {
            finish();
        } else {
            answerSent(n);
        }
    }

    @Override
    public void onResponseData(ByteBuf body, boolean end) {
        if (finished) {
            body.release();
            return;
        }
        int n = body.readableBytes();
        traffic.bytesOut(n);
        bytesOut += n;
        stream.sendData(body, end);
        if (end) {
            finish();
        } else {
            answerSent(n);
        }
    }

    /** The answer bytes went into the stream: let the app send more while the stream has window, else wait. */
    private void answerSent(int n) {
        if (stream.canSend()) {
            call.consumed(n);
        } else {
            pendingConsumed += n;
            stream.awaitWritable();
        }
    }

    /** Called both when the peer cancels the stream and when the app's connection ends abnormally. */
    @Override
    public void onReset(String reason, boolean refused) {
        if (finished) {
            return;
        }
        if (stream.isClosed()) {
            // The peer cancelled (timeout, client gone): stop the work at the app and free its slot now.
            finished = true;
            if (answered != null) {
                answered.tryFailure(new IllegalStateException(reason));
            }
            cancelCall();
            releaseSlot();
            releasePending();
            traffic.finished(499, start, false);
            trace.end(499, bytesIn, bytesOut, "downstream-closed");
            return;
        }
        call = null; // the app's connection is gone
        if (!headSent) {
            fail(new Upstream.ConnectException(reason, null));
            return;
        }
        // The app's answer was cut short: the only honest signal left is to reset the stream.
        metrics.streamsReset.increment();
        finished = true;
        stream.cancel(WmpError.INTERNAL_ERROR);
        releaseSlot();
        releasePending();
        traffic.finished(502, start, true);
        trace.end(502, bytesIn, bytesOut, "app-reset");
    }

    @Override
    public void fail(Throwable cause) {
        if (finished) {
            return;
        }
        finished = true;
        int code;
        String kind;
        String message;
        String retryAfter = null;
        if (cause instanceof RateLimitedException rl) {
            code = 429;
            kind = "rate-limited";
            retryAfter = String.valueOf(Math.max(1, TimeUnit.NANOSECONDS.toSeconds(rl.waitNanos + 999_999_999L)));
            message = "rate limit of service '" + app.service().substring("app:".length()) + "' exceeded; retry after "
                    + retryAfter + " s";
        } else if (cause instanceof TimeoutException) {
            code = 504;
            kind = "timeout";
            message = cause.getMessage();
            if (slot != null && sentNanos != 0) {
                slot.recordLatency(System.nanoTime() - sentNanos, inFlightAtSend, true); // the app is too slow
            }
        } else if (cause instanceof Cluster.ShedException shed) {
            code = 503;
            kind = shed.kind();
            message = shed.getMessage();
        } else if (cause instanceof Upstream.CircuitOpenException) {
            code = 503;
            kind = "circuit-open";
            message = cause.getMessage();
        } else if (cause instanceof Cluster.NoCapacityException) {
            code = 503;
            kind = "app-at-capacity";
            message = "app of this sidecar is at capacity: " + cause.getMessage();
        } else {
            code = 502;
            kind = "app-unavailable";
            message = cause.getMessage();
        }
        if (!stream.isClosed()) {
            ByteBuf body = stream.session().channel().alloc().buffer(message.length() + 1);
            body.writeCharSequence(message + "\n", StandardCharsets.UTF_8);
            WmpHeaders h = new WmpHeaders(4).add("content-type", "text/plain").add("x-weft-error", kind);
            if (retryAfter != null) {
                h.add("retry-after", retryAfter);
            }
            if (cause instanceof Cluster.NoCapacityException || cause instanceof Upstream.CircuitOpenException
                    || dialRefused) {
                h.add(Deadlines.UNPROCESSED_HEADER, "true"); // the caller's sidecar may retry it elsewhere
            }
            stream.sendHead(new WmpResponse(stream.id(), true, code, h, body), body.readableBytes(), true);
            if (!requestComplete) {
                stream.cancel(WmpError.NO_ERROR); // the rest of the body is not wanted
            }
        }
        cancelCall();
        releaseSlot();
        releasePending();
        traffic.finished(code, start, true);
        trace.end(code, bytesIn, bytesOut, kind);
    }

    private void finish() {
        finished = true;
        call = null; // the call returns its connection to the pool itself once both directions are done
        releaseSlot();
        releasePending();
        traffic.finished(status, start, false);
        trace.end(status, bytesIn, bytesOut, null);
    }

    private void cancelCall() {
        if (call != null) {
            UpstreamCall c = call;
            call = null;
            c.cancel();
        }
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
        if (headBody != null) {
            headBody.release();
            headBody = null;
        }
        cancelDeadline();
    }

    /** Local rate limit hit: answered 429 with Retry-After. */
    static final class RateLimitedException extends Exception {
        final long waitNanos;

        RateLimitedException(long waitNanos) {
            super("rate limited", null, false, false);
            this.waitNanos = waitNanos;
        }
    }

    /** The deadline passed before the app answered. */
    static final class TimeoutException extends Exception {
        TimeoutException() {
            super("the app did not answer within the request's deadline", null, false, false);
        }
    }
}
