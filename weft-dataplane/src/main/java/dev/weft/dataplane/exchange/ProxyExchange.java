package dev.weft.dataplane.exchange;

import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Exchange;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.resilience.DeadlineTimer;
import dev.weft.dataplane.resilience.Deadlines;
import dev.weft.dataplane.upstream.UpstreamCall;
import dev.weft.dataplane.upstream.UpstreamListener;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

/**
 * One request and its answer, on either side of a sidecar: the one exchange state machine. Its caller is a
 * {@link Downstream} (the app's HTTP/1.1 connection, or a peer's WMP stream); its decisions are the
 * {@link PolicyStack}'s phases; its attempts go to the stack's {@code Upstream} (a peer sidecar, or the local app).
 *
 * <p>Life: {@link #carry} runs the phases' request checks, then the {@code Collaborator} runs each attempt: admit (the
 * balance phase's endpoint slot, or a wait in its cluster's queue), connect (a pooled call on this loop), forward (the
 * head, with the whole body when it is here; the future completes at the answer's head), relay, until the answer's
 * last byte. That is this file: the way of a request that goes well. Every other way (a retry, the mesh's error
 * answer, a reset, the downstream leaving, the deadline) is its one subclass's, {@link RecoveringExchange}, which is
 * what {@link PolicyStack} makes. Every end goes through {@link #over}, which runs the phases' {@code onEnd} once.
 * This object is also the phases' per-request context ({@link ExchangeContext}), so they allocate nothing per
 * request.
 *
 * <p>Thread: the downstream's Worker loop only (the upstream connection is on the same loop); the Collaborator's
 * steps hop onto it ({@link Exchange#onLoop}). Buffers: request body pieces are owned here (in {@link RequestBody})
 * from {@link #onRequestBody} until given to the upstream call or released; answer bodies until given to the
 * downstream.
 */
public abstract sealed class ProxyExchange extends ExchangeContext implements Exchange, UpstreamListener
        permits RecoveringExchange {
    Downstream downstream;
    /** X-Forwarded-For for the next hop: the original client's address, or null on the mesh's second hop. */
    private String clientAddress;
    /** How many phases' onRequest ran: those, and only those, get onEnd. */
    int phaseCount;
    /** The current attempt, and its answer's future. */
    UpstreamCall call;
    Promise<Void> answered;
    /** The current attempt's answer head came without its whole body. */
    boolean streamingHead;
    final RequestBody body = new RequestBody();
    /** The answer, from its head to its relay. */
    private ResponseHead answerHead;
    private ByteBuf answerBody;
    private boolean answerEnd;
    /** Made only when pieces come before the head was relayed (virtual-thread Collaborator). */
    private EarlyAnswer early;
    boolean relayed;
    boolean finished;
    int status;
    private long bytesOut;
    /**
     * Nothing but this exchange's downstream and the task that ends it will hold it once it is over, so it may carry
     * another request ({@link ExchangeSpares}); cleared by whatever leaves a reference behind (see {@link #finish}).
     */
    private boolean reusable;

    ProxyExchange(PolicyStack stack, Downstream downstream, RequestHead head, long start, ExchangeTrace trace,
                  String clientAddress) {
        super(stack, head, start, trace);
        this.downstream = downstream;
        this.clientAddress = clientAddress;
        this.reusable = true;
    }

    /** Carries a new request: a spare exchange ({@link ExchangeSpares}) opened again, nothing of its last one left. */
    final void reopen(PolicyStack stack, Downstream downstream, RequestHead head, long start, ExchangeTrace trace,
                      String clientAddress) {
        begin(stack, head, start, trace);
        this.downstream = downstream;
        this.clientAddress = clientAddress;
        phaseCount = 0;
        call = null;
        answered = null;
        streamingHead = false;
        body.reset();
        answerHead = null;
        answerBody = null;
        answerEnd = false;
        early = null;
        relayed = false;
        finished = false;
        status = 0;
        bytesOut = 0;
        reusable = true;
    }

    @Override
    public boolean requestComplete() {
        return body.complete();
    }

    @Override
    public boolean bodyReplayable() {
        return body.replayable(sentNanos != 0);
    }

    @Override
    public boolean canRetryNow() {
        return !finished && !relayed && !streamingHead;
    }

    @Override
    public boolean relayed() {
        return relayed;
    }

    /**
     * Runs the phases' request checks, then hands the exchange to the Collaborator; or, when a phase refuses it,
     * answers at once. The downstream calls this once it gave the exchange what body came with the head.
     */
    public void carry() {
        Phase[] phases = stack.phases();
        for (int i = 0; i < phases.length; i++) {
            ExchangeError e = phases[i].onRequest(this);
            if (e != null) {
                refuse(i, e);
                return;
            }
        }
        phaseCount = phases.length;
        if (deadlineNanos != 0) {
            DeadlineTimer.of(loop()).add(this, deadlineNanos);
        }
        stack.collaborator().carry(this);
    }

    @Override
    public EventLoop loop() {
        return downstream.loop();
    }

    @Override
    public Future<?> admit() { // on the loop (always, with the event-loop Collaborator) a step costs no lambda
        if (loop().inEventLoop()) {
            return admitOnLoop();
        }
        reusable = false; // a virtual thread holds this exchange until it ends
        return Exchange.onLoop(loop(), this::admitOnLoop);
    }

    private Future<?> admitOnLoop() {
        if (finished) {
            return loop().newFailedFuture(Failures.ABANDONED);
        }
        EndpointState now = stack.balance().admitNow(this);
        if (now != null) {
            admitted(now);
            return DONE;
        }
        Future<EndpointState> f = stack.balance().admit(this);
        if (f.isDone()) {
            admitted(f.getNow());
        } else {
            reusable = false; // the queue's listener holds this exchange until it is served or times out
            f.addListener(x -> admitted(f.getNow()));
        }
        return f;
    }

    private void admitted(EndpointState e) {
        if (e == null) {
            return; // admission failed
        }
        endpoint = e;
        if (finished) {
            releaseSlot(); // the client left while we waited for capacity
        } else {
            trace.admitted(cluster.service(), endpoint.endpoint().id(), endpoint.address());
        }
    }

    @Override
    public Future<?> connect() {
        return loop().inEventLoop() ? connectOnLoop() : Exchange.onLoop(loop(), this::connectOnLoop);
    }

    private Future<UpstreamCall> connectOnLoop() {
        if (finished || endpoint == null) {
            return loop().newFailedFuture(Failures.ABANDONED);
        }
        EndpointState target = endpoint;
        Future<UpstreamCall> f = stack.upstream().open(loop(), target.endpoint(), target.address(), this);
        if (f.isDone()) {
            connected(target, f);
        } else {
            reusable = false; // the dial's listener holds this exchange
            f.addListener(x -> connected(target, f));
        }
        return f;
    }

    private void connected(EndpointState target, Future<UpstreamCall> f) {
        if (!f.isSuccess()) {
            return;
        }
        target.markReachable();
        call = f.getNow();
        if (finished) {
            cancelCall(); // and no trace event: the trace ended (and its record may be another exchange's now)
        } else {
            trace.connected();
        }
    }

    @Override
    public Future<?> forward() {
        return loop().inEventLoop() ? forwardOnLoop() : Exchange.onLoop(loop(), this::forwardOnLoop);
    }

    private Future<Void> forwardOnLoop() {
        if (finished || call == null) {
            return loop().newFailedFuture(Failures.ABANDONED);
        }
        answered = new Exchange.Answer(loop(), this);
        sendHead();
        return answered;
    }

    /**
     * Sends the head. When the whole body is already here (the common small request), it rides with the head: one
     * WMP frame (or one HTTP/1.1 write) per request instead of two.
     */
    private void sendHead() {
        boolean end = body.wholeForHead();
        if (!end) {
            reusable = false; // the body follows the head: the upstream call may still hold this exchange at the end
        }
        ByteBuf first = body.forHead(end && stack.retries() && policy.retry().attempts() > 1);
        for (Phase p : stack.phases()) {
            p.onSend(this);
        }
        stack.traffic().bytesIn(first.readableBytes());
        sentNanos = System.nanoTime();
        inFlightAtSend = endpoint.inFlight();
        try {
            call.sendHead(head, stack.authority(this), clientAddress, first, end);
        } catch (ExchangeError e) {
            call = null; // nothing was sent; the Collaborator, waiting on the answer, ends the exchange with e
            answered.tryFailure(e);
            return;
        }
        trace.sent(sentNanos);
        pumpBody();
    }

    /** A body piece from the downstream ({@code end}: the last one). Owned here from now on. */
    public void onRequestBody(ByteBuf piece, boolean end) {
        body.add(piece, end); // when finished, only to learn that the request is complete
        if (finished) {
            body.release();
            return;
        }
        if (call != null && answered != null) {
            pumpBody();
        } else if (!end) {
            downstream.pauseRequest(); // not forwarded yet: hold what is decoded, read on once we are
        }
    }

    /** Moves request body pieces upstream as far as the upstream's flow control allows. */
    private void pumpBody() {
        if (call == null || finished) {
            return;
        }
        if (!body.pump(call, stack.traffic())) {
            downstream.pauseRequest();
            call.awaitWritable();
        } else if (call.canSend()) {
            downstream.requestConsumed(body.takeCredit());
        } else if (body.owesCredit()) {
            call.awaitWritable(); // the upstream's socket backs up: credit the downstream once it drains
        }
    }

    @Override
    public void onWritable() {
        pumpBody();
    }

    @Override
    public void onResponseHead(ResponseHead h, ByteBuf body, boolean end) {
        if (finished) {
            body.release();
            return;
        }
        int code = h.status();
        boolean unprocessed = false;
        if (!stack.trustsUnprocessed()) {
            ProxyHeaders.dropMeshFields(h.fields()); // an app never speaks for the mesh: "send it again", an error kind
        } else {
            unprocessed = code >= 500 && h.get(Deadlines.UNPROCESSED_HEADER) != null;
        }
        streamingHead = !end;
        if (attempt(code, unprocessed, null)) {
            body.release(); // the whole (error) answer is here: drop it and try another endpoint
            call = null;
            retry();
            return;
        }
        answerHead = h;
        answerBody = body;
        answerEnd = end;
        status = code;
        for (Phase p : stack.phases()) {
            p.onAnswer(this, code);
        }
        trace.firstByte(code);
        answered.trySuccess(null);
    }

    /** Tells every phase how an attempt ended; true if one asks for another attempt and one is possible. */
    boolean attempt(int code, boolean unprocessed, Throwable failure) {
        boolean again = false;
        for (Phase p : stack.phases()) {
            again |= p.onAttempt(this, code, unprocessed, failure);
        }
        return again && canRetryNow();
    }

    @Override
    public void relay() {
        if (finished || answerHead == null) {
            return;
        }
        relayed = true;
        ResponseHead h = answerHead;
        ByteBuf body = answerBody;
        answerHead = null;
        answerBody = null;
        int n = body.readableBytes();
        stack.traffic().bytesOut(n);
        bytesOut += n;
        downstream.answer(this, h, body, answerEnd);
        h.fields().recycle(); // written out: the upstream's decoder fills the list again for a later answer
        if (answerEnd) {
            finish(false);
            return;
        }
        reusable = false; // a streamed answer: the downstream's write listeners hold this exchange
        if (early != null) {
            early.drain(this::answerData);
        }
    }

    @Override
    public void onResponseData(ByteBuf body, boolean end) {
        if (finished) {
            body.release();
            return;
        }
        if (!relayed) {
            if (early == null) {
                early = new EarlyAnswer(); // the virtual-thread Collaborator has not relayed the head yet
                reusable = false;
            }
            early.add(body, end);
            return;
        }
        answerData(body, end);
    }

    private void answerData(ByteBuf body, boolean end) {
        int n = body.readableBytes();
        stack.traffic().bytesOut(n);
        bytesOut += n;
        downstream.answerData(this, body, end);
        if (end) {
            finish(false);
        }
    }

    /** The downstream took {@code bytes} of the answer: the upstream may send as much more. */
    public void answerConsumed(int bytes) {
        if (call != null && bytes > 0) {
            call.consumed(bytes);
        }
    }

    /** Phase {@code failed} refused the request: nothing was sent anywhere, so what is left of its body is dropped. */
    abstract void refuse(int failed, ExchangeError e);

    /** The attempt that just ended gets another: its slot and call are given back, and the Collaborator starts over. */
    abstract void retry();

    /** The downstream ended it first (gone: 499; body refused: 408, 400): stop the upstream work, record it so. */
    public abstract void abort(int status, String kind);

    /** The answer's last byte went downstream. */
    private void finish(boolean close) {
        if (finished) {
            return;
        }
        if (!body.complete()) {
            cancelCall(); // answered before the request body ended: the upstream connection cannot be reused
        }
        call = null; // the call returns its connection to the pool itself once both directions are done
        over(null, status, false, null);
        // An unread request body does not close the client's connection: the downstream drops the rest as it comes
        // (bounded by --body-timeout). Closing with the client's bytes unread makes the kernel reset the connection,
        // and the client can lose the answer it was just sent (seen under load: a 403 lost, "no bytes").
        downstream.done(this, close);
        if (reusable && attempts == 1 && body.complete()) {
            // The straight way, ended: the downstream let go in done(), no listener holds it. A spare once this task
            // has run (ExchangeSpares); every other exchange is the garbage collector's.
            reusable = false;
            ExchangeSpares.ofThisLoop().giveBack(this, loop());
        }
    }

    /**
     * The exchange is over, with {@code code} sent downstream: ends it once (phases, buffers, slot), counts it and
     * ends its trace. {@code meshError}: the sidecar made the status; {@code kind}: its x-weft-error, or null.
     */
    void over(ExchangeError error, int code, boolean meshError, String kind) {
        finished = true;
        end(error);
        long now = System.nanoTime(); // one reading for the metrics and the trace
        stack.traffic().finished(code, start, now, meshError);
        trace.end(code, body.sent(), bytesOut, kind, now);
        head.fields().recycle(); // sent (for the last time) or refused; the phases' ends are past, answers read none
    }

    /** Runs the phases' onEnd (in reverse) and frees what the exchange holds. */
    private void end(ExchangeError error) {
        Phase[] phases = stack.phases();
        for (int i = phaseCount - 1; i >= 0; i--) {
            phases[i].onEnd(this, error);
        }
        phaseCount = 0;
        releaseSlot();
        releasePending();
    }

    void cancelCall() {
        if (call != null) {
            UpstreamCall c = call;
            call = null;
            c.cancel();
        }
    }

    private void releasePending() {
        body.release();
        if (early != null) {
            early.release();
        }
        if (answerBody != null) {
            answerBody.release();
            answerBody = null;
        }
        cancelDeadline();
    }
}
