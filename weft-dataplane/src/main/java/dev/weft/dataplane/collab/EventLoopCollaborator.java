package dev.weft.dataplane.collab;

import io.netty.util.concurrent.Future;

/**
 * Continuations on the Worker's own event loop: each step's listener starts the next. Upstream channels are
 * registered on the same loop, so a whole exchange runs on one thread with no hand-off at all.
 */
final class EventLoopCollaborator implements Collaborator {

    @Override
    public String name() {
        return "event-loop";
    }

    @Override
    public void carry(Exchange ex) {
        ex.admit().addListener((Future<Object> admitted) -> {
            if (!admitted.isSuccess()) {
                ex.fail(admitted.cause());
                return;
            }
            ex.connect().addListener((Future<Object> connected) -> {
                if (!connected.isSuccess()) {
                    ex.fail(connected.cause());
                    return;
                }
                ex.forward().addListener((Future<Object> answered) -> {
                    if (answered.isSuccess()) {
                        ex.relay();
                    } else {
                        ex.fail(answered.cause());
                    }
                });
            });
        });
    }
}
