package dev.weft.dataplane.exchange;

import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.observe.ExchangeTrace;

/**
 * The exchange, with what it does when something fails: {@link ProxyExchange} follows a request that goes well; this
 * is every other way. An attempt that failed before any answer was relayed goes again when the phases ask for it
 * ({@link #retry}: the retry phase, a refused stream, an unprocessed 503); otherwise the mesh answers its own error
 * ({@link #fail}, through {@link Failures}). A reset once the answer started can only cut it short. A phase's refusal
 * ({@link #refuse}), the downstream leaving ({@link #abort}) and the deadline ({@link #expired}) end it too. Each way
 * ends through {@link ProxyExchange#over} once.
 *
 * <p>Thread: the exchange's Worker loop, as {@link ProxyExchange}. Buffers: none of its own; what is left of the
 * request body and any held answer are released by {@code over}.
 */
final class RecoveringExchange extends ProxyExchange {

    RecoveringExchange(PolicyStack stack, Downstream downstream, RequestHead head, long start, ExchangeTrace trace,
                       String clientAddress) {
        super(stack, downstream, head, start, trace, clientAddress);
    }

    /** Phase {@code failed} refused the request: nothing was sent anywhere, so what is left of its body is dropped. */
    @Override
    void refuse(int failed, ExchangeError e) {
        phaseCount = failed;
        over(e, e.status(), true, e.kind());
        downstream.answerError(this, e, true);
        downstream.done(this, e.status() == 400); // a bad head: its framing cannot be trusted
    }

    @Override
    public void fail(Throwable cause) {
        if (finished || cause == Failures.SUPERSEDED || cause == Failures.ABANDONED) {
            return;
        }
        boolean unprocessed = Failures.unprocessed(cause);
        if (attempt(0, unprocessed, cause)) {
            retry();
            return;
        }
        ExchangeError e = Failures.toError(cause, this);
        cancelCall();
        over(e, e.status(), true, e.kind());
        // Part of the body may have gone upstream, and the rest is unread: HTTP/1.1 cannot skip it safely.
        downstream.answerError(this, e, body.complete());
        downstream.done(this, !body.complete());
    }

    @Override
    public void onReset(String reason, boolean refused) {
        if (finished) {
            return;
        }
        stack.metrics().streamsReset.increment();
        call = null;
        if (!relayed) {
            fail(new Failures.UpstreamReset(reason, refused));
            return;
        }
        // The answer already started; all that is left is to signal truncation.
        downstream.abortAnswer(this);
        over(null, stack.toApp() ? 502 : status, stack.toApp(), stack.toApp() ? "app-reset" : "upstream-reset");
        downstream.done(this, true);
    }

    @Override
    public void onError(ExchangeError error) {
        if (finished) {
            return;
        }
        call = null;
        if (!relayed) {
            fail(error);
        } else {
            onReset(error.getMessage(), false); // the answer had started: all that is left is to cut it
        }
    }

    @Override
    void retry() {
        attempts++;
        lastEndpoint = endpoint != null ? endpoint : lastEndpoint;
        cancelCall();
        releaseSlot();
        if (answered != null) {
            answered.tryFailure(Failures.SUPERSEDED); // ends the previous attempt's Collaborator chain
        }
        answered = null;
        sentNanos = 0;
        streamingHead = false;
        stack.collaborator().carry(this);
    }

    @Override
    public void abort(int status, String kind) {
        if (finished) {
            return;
        }
        cancelCall();
        if (answered != null) {
            answered.tryFailure(Failures.ABANDONED);
        }
        over(null, relayed ? 499 : status, false, relayed ? "downstream-closed" : kind); // answer begun: cut short
    }

    /** The deadline passed before the answer started: cancel upstream (frees its slot there too) and say 504. */
    @Override
    protected void expired() {
        if (finished || relayed) {
            return;
        }
        Failures.Timeout t = new Failures.Timeout(stack.toApp());
        if (answered != null) {
            answered.tryFailure(t);
        }
        fail(t);
    }
}
