package dev.weft.dataplane.security;

/**
 * {@code --mtls}: how a sidecar treats the mesh link (docs/security.md); {@link MeshTls} applies it to connections.
 */
public enum MtlsMode {
    /**
     * The default. A certificate is required: the sidecar gets one before it serves, and is not ready without a valid one; it
     * dials only mTLS and refuses plaintext (WMP and HTTP/1.1) on its inbound port.
     */
    STRICT("strict"),
    /**
     * A certificate is fetched and renewed when there is a {@code --token-file}; the sidecar serves without one. It
     * accepts mTLS (once it holds a certificate) and plaintext, and dials mTLS to every peer while it holds one.
     */
    PERMISSIVE("permissive"),
    /** No certificate is requested, even with a {@code --token-file}; no TLS at all (a WARN line at start). */
    OFF("off");

    private final String label;

    MtlsMode(String label) {
        this.label = label;
    }

    /** As written on the command line and shown in /config. */
    public String label() {
        return label;
    }
}
