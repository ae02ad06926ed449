package dev.weft.dataplane.collab;

import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;

import java.util.function.BiConsumer;

/**
 * Continuations on the Worker's own event loop: each step's completion starts the next. Upstream channels are
 * registered on the same loop, so a whole exchange runs on one thread with no hand-off at all.
 *
 * <p>A step whose future is already complete when it returns (a free slot, a live WMP session: the usual case) is
 * followed at once, without registering a listener; only a step that has to wait (for capacity, a dial, the answer)
 * leaves a continuation behind. Thread: the caller's event loop, which is the exchange's.
 */
final class EventLoopCollaborator implements Collaborator {

    @Override
    public String name() {
        return "event-loop";
    }

    @Override
    public void carry(Exchange ex) {
        then(ex, ex.admit(), EventLoopCollaborator::admitted);
    }

    /** Runs {@code next} now if {@code step} is complete, else when it completes. */
    private static void then(Exchange ex, Future<?> step, BiConsumer<Exchange, Future<?>> next) {
        if (step.isDone()) {
            next.accept(ex, step);
        } else {
            step.addListener(f -> next.accept(ex, f));
        }
    }

    private static void admitted(Exchange ex, Future<?> admitted) {
        if (!admitted.isSuccess()) {
            ex.fail(admitted.cause());
            return;
        }
        then(ex, ex.connect(), EventLoopCollaborator::connected);
    }

    private static void connected(Exchange ex, Future<?> connected) {
        if (!connected.isSuccess()) {
            ex.fail(connected.cause());
            return;
        }
        // The answer's head is never here yet: this step always waits.
        Future<?> answer = ex.forward();
        if (answer instanceof Exchange.Answer a) {
            a.addListener(RELAY); // the exchange rides in the future: no listener object per exchange
        } else {
            answer.addListener(answered -> relayOrFail(ex, answered));
        }
    }

    private static final GenericFutureListener<Future<Void>> RELAY = f -> relayOrFail(((Exchange.Answer) f).exchange, f);

    private static void relayOrFail(Exchange ex, Future<?> answered) {
        if (answered.isSuccess()) {
            ex.relay();
        } else {
            ex.fail(answered.cause());
        }
    }
}
