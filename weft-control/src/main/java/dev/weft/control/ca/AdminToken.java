package dev.weft.control.ca;

import dev.weft.registry.auth.ControlCredentials;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * The operator token: what {@code ./weft apply}, {@code token create} and the topology commands send as
 * {@code Authorization: Bearer ...} (docs/security.md, "The operator token"). Read from {@code --admin-token-file},
 * or generated at the first start into {@code DATA_DIR/admin.token} (mode 0600, like the CA's key; never written to
 * etcd). Only its SHA-256 is kept in memory after {@link #matches} is set up, and comparisons take the same time
 * whatever the guess ({@link MessageDigest#isEqual} over two digests of equal length).
 *
 * <p>Thread: immutable once made; {@link #matches} from any thread.
 */
public final class AdminToken {
    public static final String FILE = "admin.token";
    /** Tells an operator token from a join token ({@code weft_jt_}) at a glance, in a file or a log of a mistake. */
    public static final String PREFIX = "weft_at_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] sha256;
    private final Path file;
    private final boolean generated;

    private AdminToken(String token, Path file, boolean generated) {
        this.sha256 = sha256(token);
        this.file = file;
        this.generated = generated;
    }

    /** The token in {@code file}, which must exist, be readable by its owner only and hold a token on its first line. */
    public static AdminToken read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("--admin-token-file " + file + " does not exist (expected a file holding the"
                    + " operator token, mode 0600)");
        }
        Issuer.requireOwnerOnly(file, "the operator token file");
        String token = ControlCredentials.readToken(file);
        if (token == null || token.length() < 16) {
            throw new IOException("--admin-token-file " + file + " holds no usable token (expected one line of at"
                    + " least 16 printable characters, e.g. made with: openssl rand -hex 32)");
        }
        return new AdminToken(token, file, false);
    }

    /** The token in {@code dataDir/admin.token}, generated there first (256 random bits, mode 0600) if missing. */
    public static AdminToken inDataDir(Path dataDir) throws IOException {
        Path file = dataDir.resolve(FILE);
        if (Files.exists(file)) {
            return read(file);
        }
        Files.createDirectories(dataDir);
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        String token = PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        Issuer.writeAtomically(file, token + "\n");
        return new AdminToken(token, file, true);
    }

    /** A token held only in memory, for a control plane started in code without a data dir of its own. */
    public static AdminToken inMemory(String token) {
        return new AdminToken(token, null, false);
    }

    /** Whether {@code candidate} is the operator token, in time independent of where they differ. */
    public boolean matches(String candidate) {
        return candidate != null && MessageDigest.isEqual(sha256, sha256(candidate));
    }

    /** The file it lives in, or null when held in memory only. */
    public Path file() {
        return file;
    }

    /** One line for the log at start: where the token is; never the token. */
    public String describe() {
        if (file == null) {
            return "operator token held in memory (control plane started in code)";
        }
        return "operator token " + (generated ? "generated in " : "read from ") + file
                + " (send it as Authorization: Bearer; the CLI's --admin-token-file)";
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
