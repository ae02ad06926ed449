package dev.weft.dataplane.collab;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.util.function.Supplier;

/**
 * One request/response exchange as a {@link Collaborator} carries it, in the paper's steps: admit (wait for a
 * slot), connect (get a connection to the chosen target), forward (send the request head; the future completes
 * when the answer's head arrives, which is the "await"), relay (pass the answer to the caller).
 *
 * <p>An exchange's state belongs to its Worker event loop ({@link #loop()}). Every step may be called from any
 * thread: a step called off the loop hops onto it, which is what lets a virtual-thread Collaborator drive it.
 * Body bytes never go through the Collaborator: they stream between channels on the loop.
 */
public interface Exchange {

    EventLoop loop();

    Future<?> admit();

    Future<?> connect();

    Future<?> forward();

    /** Called on the loop once {@link #forward()} succeeded. */
    void relay();

    /** Called on the loop when a step failed; answers the caller with an error and frees what was taken. */
    void fail(Throwable cause);

    /** Runs {@code step} on {@code loop}, from any thread, and returns its future. */
    static <T> Future<T> onLoop(EventLoop loop, Supplier<Future<T>> step) {
        if (loop.inEventLoop()) {
            return step.get();
        }
        Promise<T> p = loop.newPromise();
        loop.execute(() -> step.get().addListener(f -> {
            if (f.isSuccess()) {
                @SuppressWarnings("unchecked") T v = (T) f.getNow();
                p.trySuccess(v);
            } else {
                p.tryFailure(f.cause());
            }
        }));
        return p;
    }

    /**
     * A {@link #forward()} future that carries its exchange, so that the event-loop Collaborator continues every
     * exchange with one shared listener instead of a listener object per exchange. Completes on the exchange's loop.
     */
    final class Answer extends DefaultPromise<Void> {
        final Exchange exchange;

        public Answer(EventLoop loop, Exchange exchange) {
            super(loop);
            this.exchange = exchange;
        }
    }
}
