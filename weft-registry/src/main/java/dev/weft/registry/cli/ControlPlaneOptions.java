package dev.weft.registry.cli;

import dev.weft.registry.auth.ControlCredentials;
import dev.weft.registry.weft.ControlPlaneUrl;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * "The control plane" for every command that talks to it ({@code apply}, {@code token create}, {@code stat},
 * {@code top}, {@code dashboard}, {@code diagnose}, {@code trace}): its URL, how to trust it when it serves TLS
 * ({@code --control-ca}, {@code --control-ca-pin}) and the operator token to send, as one picocli mixin so that each
 * command takes the same flags with the same words (docs/security.md).
 *
 * <p>{@code --admin-token-file} defaults to the local control plane's {@code .weft/control/admin.token} (what
 * {@code ./weft control} generates in its default data dir) when that file is readable, so the quick start on one
 * machine needs no flag. The token is read when a request is made, never printed.
 *
 * <p>Thread: picocli fills it on the command's thread; read-only afterwards.
 */
public final class ControlPlaneOptions {
    public static final String DEFAULT_URL = "weft://127.0.0.1:7700";
    /** Where {@code ./weft control} keeps the operator token with its default {@code --data-dir}. */
    public static final Path LOCAL_TOKEN_FILE = Path.of(".weft", "control", "admin.token");

    // --control is the name ./weft diagnose had; kept so that scripts written for it still run.
    @Option(names = {"--registry", "--control"}, paramLabel = "URL", defaultValue = DEFAULT_URL,
            description = "The control plane, weft://HOST:PORT, or weft+tls://HOST:PORT when it serves TLS"
                    + " (--api-tls; then with --control-ca or --control-ca-pin) (default: ${DEFAULT-VALUE}).")
    String url = DEFAULT_URL;

    @Mixin
    ControlTrustOptions trust = new ControlTrustOptions();

    @Option(names = "--admin-token-file", paramLabel = "FILE",
            description = "The operator token to send (first line of FILE). Default: " + ".weft/control/admin.token"
                    + " when readable (the local control plane's).")
    Path adminTokenFile;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    public ControlPlaneOptions() {}

    /** For code that builds the options itself (the demo, tests). */
    public ControlPlaneOptions(String url, Path adminTokenFile) {
        this.url = url;
        this.adminTokenFile = adminTokenFile;
    }

    /** The same, trusting a control plane that serves TLS by {@code controlCa} and/or {@code controlCaPin}. */
    public ControlPlaneOptions(String url, Path adminTokenFile, Path controlCa, String controlCaPin) {
        this(url, adminTokenFile);
        this.trust = new ControlTrustOptions(controlCa, controlCaPin);
    }

    /**
     * The control plane's URL, with {@code --control-ca}/{@code --control-ca-pin} as its {@code ca=}/{@code ca-pin=}
     * options ({@link ControlPlaneUrl}), so that every client opened from it trusts the same CA.
     *
     * @throws CommandLine.ParameterException if either is given with a plain {@code weft://} URL, or is unusable
     */
    public String url() {
        try {
            return trust.withTrust(url);
        } catch (IllegalArgumentException e) {
            if (spec != null && spec.commandLine() != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            throw e;
        }
    }

    /** The file the token is read from: the one given, else the local default if readable, else null. */
    public Path tokenFile() {
        if (adminTokenFile != null) {
            return adminTokenFile;
        }
        return Files.isReadable(LOCAL_TOKEN_FILE) ? LOCAL_TOKEN_FILE : null;
    }

    /**
     * The operator credentials, for a {@code Registry} or any request to the control plane.
     *
     * @throws CommandLine.ParameterException when {@code --admin-token-file} was given but holds no token
     */
    public ControlCredentials credentials() {
        String value = authorization();
        return value == null ? ControlCredentials.NONE : (method, target, body) -> value;
    }

    /** The {@code Authorization} header's value, or null without a token. */
    public String authorization() {
        Path file = tokenFile();
        if (file == null) {
            return null;
        }
        String token = ControlCredentials.readToken(file);
        if (token == null) {
            String message = "--admin-token-file " + file + " cannot be read or holds no token";
            if (spec != null && spec.commandLine() != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), message);
            }
            throw new IllegalArgumentException(message);
        }
        return "Bearer " + token;
    }

    /** Said after a 401 or 403, so the operator knows which token was sent, if any. */
    public String hint() {
        Path file = tokenFile();
        return file == null ? "no operator token sent: pass --admin-token-file FILE (the control plane's"
                + " DATA_DIR/admin.token)" : "sent the operator token from " + file;
    }
}
