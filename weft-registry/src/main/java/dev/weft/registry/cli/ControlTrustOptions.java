package dev.weft.registry.cli;

import dev.weft.registry.weft.ControlPlaneUrl;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * How a command trusts a control plane that serves TLS: {@code --control-ca} and {@code --control-ca-pin}, as one
 * picocli mixin, so that the sidecar and every operator command ({@link ControlPlaneOptions}) take the same two flags
 * with the same words (docs/security.md, "The control plane's API over TLS").
 *
 * <p>Thread: picocli fills it on the command's thread; read-only afterwards.
 */
public final class ControlTrustOptions {
    @Option(names = "--control-ca", paramLabel = "FILE",
            description = "With weft+tls://: trust the control plane's certificate if it chains to a CA in FILE"
                    + " (PEM: its GET /v1/trust-bundle, or its DATA_DIR/ca/root.pem).")
    Path controlCa;

    @Option(names = "--control-ca-pin", paramLabel = "sha256:HEX",
            description = "With weft+tls://: trust the control plane's certificate if its chain holds a CA whose"
                    + " public key has this SHA-256 (printed by ./weft token create); the chain, dates and host name"
                    + " are still checked.")
    String controlCaPin;

    public ControlTrustOptions() {}

    /** For code that builds the options itself (the demo, tests). */
    public ControlTrustOptions(Path controlCa, String controlCaPin) {
        this.controlCa = controlCa;
        this.controlCaPin = controlCaPin;
    }

    /**
     * {@code url} with these flags as its {@code ca=}/{@code ca-pin=} options ({@link ControlPlaneUrl#withTrust}).
     *
     * @throws IllegalArgumentException if either is given with a URL that is not {@code weft+tls://}, or is unusable
     */
    public String withTrust(String url) {
        return ControlPlaneUrl.withTrust(url, controlCa, controlCaPin);
    }
}
