package dev.weft.dataplane;

/** The sidecar contract with exchanges carried as continuations on the Worker loops (the default). */
class EventLoopCollaboratorTest extends SidecarContract {
    @Override
    String collaborator() {
        return "event-loop";
    }
}
