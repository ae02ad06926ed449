package dev.weft.dataplane.security;

/**
 * {@code --mtls}: how a sidecar treats the mesh link. Today only the certificate acts on it (docs/security.md): mTLS
 * on the link itself is not built yet, so traffic between sidecars is plaintext in every mode.
 */
public enum MtlsMode {
    /** A certificate is required: the sidecar gets one before it serves, and is not ready without a valid one. */
    STRICT("strict"),
    /** A certificate is fetched and renewed when there is a {@code --token-file}; the sidecar serves without one. */
    PERMISSIVE("permissive"),
    /** No certificate is requested, even with a {@code --token-file}. */
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
