package dev.weft.dataplane.collab;

import io.netty.util.concurrent.Future;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The paper's coroutine Collaborator on Java virtual threads: one virtual thread per exchange, written as straight
 * blocking code (admit, connect, forward and await, relay). Virtual threads run on the JDK's work-stealing
 * ForkJoinPool, as the paper's coroutines steal tasks. Each step still executes on the Worker loop (the exchange
 * hops there), so the virtual thread only sequences and waits; the cost is two thread hand-offs per step.
 */
final class VirtualThreadCollaborator implements Collaborator {
    private final ExecutorService threads = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("weft-collaborator-", 0).factory());

    @Override
    public String name() {
        return "virtual-thread";
    }

    @Override
    public void carry(Exchange ex) {
        threads.execute(() -> {
            try {
                await(ex.admit());
                await(ex.connect());
                await(ex.forward());
                ex.loop().execute(ex::relay);
            } catch (Throwable t) {
                Throwable cause = t instanceof ExecutionException ee && ee.getCause() != null ? ee.getCause() : t;
                ex.loop().execute(() -> ex.fail(cause));
            }
        });
    }

    private static void await(Future<?> f) throws ExecutionException, InterruptedException {
        f.get(); // parks the virtual thread, not a carrier
    }
}
