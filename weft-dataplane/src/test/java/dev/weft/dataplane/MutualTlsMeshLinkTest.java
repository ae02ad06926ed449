package dev.weft.dataplane;

/**
 * The sidecar contract with mTLS on the mesh link: both sidecars {@code --mtls strict} with certificates from the
 * control plane's CA, so every request crosses TLS 1.3 (ALPN weft-wmp/1) between them.
 */
class MutualTlsMeshLinkTest extends SidecarContract {
    @Override
    String collaborator() {
        return "event-loop";
    }

    @Override
    String mtls() {
        return "strict";
    }
}
