package dev.weft.dataplane;

/** The sidecar contract with exchanges carried by virtual threads (the paper's coroutines). */
class VirtualThreadCollaboratorTest extends SidecarContract {
    @Override
    String collaborator() {
        return "virtual-thread";
    }
}
