package dev.weft.bench;

import dev.weft.control.ca.JoinToken;
import dev.weft.control.ca.TokenCommand;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The one place weft-bench makes join tokens: the demo's and the bench's sidecars get theirs here, from the control
 * plane the experiment started, through the same call as {@code ./weft token create} (so whatever that call needs to
 * be allowed, an operator token for instance, is added here once).
 *
 * <p>Thread: the experiment's; each call blocks for one HTTP request to the control plane (at most 5 s).
 */
public final class MeshTokens {
    /** Longer than any bench run: a sidecar needs the token only at start, and renews without it. */
    static final Duration TTL = Duration.ofHours(24);

    private MeshTokens() {}

    /**
     * Makes a token for {@code service} and writes it, alone, to {@code file} (mode 0600, as a secret should be).
     *
     * @param registry       the control plane, {@code weft://HOST:PORT}
     * @param controlDataDir the control plane's data dir (where it keeps what an operator needs to call it)
     */
    public static Path create(String registry, Path controlDataDir, String service, Path file)
            throws ExperimentException, InterruptedException {
        JoinToken token;
        try {
            // Making a token is the operator's write: the control plane's own admin.token in its data dir.
            token = TokenCommand.create(registry, controlDataDir.resolve("admin.token"), service, TTL, false);
        } catch (IOException | IllegalArgumentException e) {
            throw new ExperimentException("cannot make a join token for service '" + service + "' (control plane data"
                    + " dir " + controlDataDir + "): " + e.getMessage(), e);
        }
        try {
            return SecretFile.write(file, token.token() + "\n");
        } catch (IOException e) {
            throw new ExperimentException("cannot write the join token file " + file + ": " + e.getMessage(), e);
        }
    }
}
