package dev.weft.control;

import dev.weft.control.ca.AdminToken;
import dev.weft.registry.auth.ControlCredentials;

import java.nio.file.Path;

/** The operator token a control plane started on {@code dataDir} generated there, as tests send it. */
public final class Operator {
    private Operator() {}

    public static String token(Path dataDir) {
        return ControlCredentials.readToken(dataDir.resolve(AdminToken.FILE));
    }

    /** The {@code Authorization} header's value. */
    public static String header(Path dataDir) {
        return "Bearer " + token(dataDir);
    }

    /** For a registry client: the token file is read at each request, so it may be created after this call. */
    public static ControlCredentials credentials(Path dataDir) {
        return ControlCredentials.bearerFile(dataDir.resolve(AdminToken.FILE));
    }
}
