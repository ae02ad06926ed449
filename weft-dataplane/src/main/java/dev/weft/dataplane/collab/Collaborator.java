package dev.weft.dataplane.collab;

/**
 * Carries exchanges from admission to relay: the paper's Collaborator. Two implementations, chosen with
 * {@code --collaborator}: {@link EventLoopCollaborator} chains the steps as continuations on the Worker's own loop;
 * {@link VirtualThreadCollaborator} runs each exchange as a virtual thread (the paper's coroutine) that blocks on each
 * step. docs/architecture.md records which is faster here and why it is the default.
 */
public interface Collaborator {

    String name();

    void carry(Exchange exchange);

    static Collaborator named(String name) {
        return switch (name) {
            case "event-loop" -> new EventLoopCollaborator();
            case "virtual-thread" -> new VirtualThreadCollaborator();
            default -> throw new IllegalArgumentException(
                    "unknown collaborator '" + name + "' (expected: event-loop, virtual-thread)");
        };
    }
}
