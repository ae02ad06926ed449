package dev.weft.dataplane;

/** The sidecar contract with plain HTTP/1.1 between the sidecars instead of WMP ({@code --mesh-protocol http1}). */
class Http1MeshLinkTest extends SidecarContract {
    @Override
    String collaborator() {
        return "event-loop";
    }

    @Override
    String meshProtocol() {
        return "http1";
    }
}
