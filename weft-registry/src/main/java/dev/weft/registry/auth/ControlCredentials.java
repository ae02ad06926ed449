package dev.weft.registry.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * What a client of the control plane's API proves itself with (docs/security.md, "Credentials of the control plane's
 * API"): the value of the {@code Authorization} header of one request, or null to send none.
 *
 * <p>Three kinds exist: an operator token ({@link #bearerFile}, the CLI's {@code --admin-token-file}), a join token
 * (the same, from a sidecar's {@code --token-file}) and a sidecar's mesh certificate ({@link RequestSignature}: a
 * signature over the request made with the sidecar's key). Thread: any; implementations keep no per-request state.
 */
@FunctionalInterface
public interface ControlCredentials {
    /** No credentials: the API answers 401 to every write, and to topology reads unless local mode exempts them. */
    ControlCredentials NONE = (method, target, body) -> null;

    /**
     * @param method the request's method, e.g. {@code PUT}
     * @param target the request target as sent: the raw path and query, e.g. {@code /v1/leases/abc/keepalive}
     * @param body   the body's bytes (empty or null for none)
     * @return the {@code Authorization} header's value, or null for none
     */
    String authorization(String method, String target, byte[] body);

    /** {@code Authorization: Bearer TOKEN}, for an operator or a join token held in memory. */
    static ControlCredentials bearer(String token) {
        String value = "Bearer " + checkToken(Objects.requireNonNull(token, "token").strip(), "the token");
        return (method, target, body) -> value;
    }

    /**
     * {@code Authorization: Bearer} with the token in {@code file}, read again for each request: a token dropped into
     * the file later (a sidecar's fresh join token, a rotated operator token) is used from the next request on. A file
     * that cannot be read sends no header, so the control plane's 401 says what is missing.
     */
    static ControlCredentials bearerFile(Path file) {
        Objects.requireNonNull(file, "file");
        return (method, target, body) -> {
            String token = readToken(file);
            return token == null ? null : "Bearer " + token;
        };
    }

    /** The first line of {@code file}, stripped, or null if it cannot be read or holds no usable token. */
    static String readToken(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).strip();
            int newline = text.indexOf('\n');
            String token = newline < 0 ? text : text.substring(0, newline).strip();
            return token.isEmpty() || !printable(token) ? null : token;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String checkToken(String token, String what) {
        if (token.isEmpty() || !printable(token)) {
            throw new IllegalArgumentException(what + " is empty or holds characters a header cannot carry");
        }
        return token;
    }

    private static boolean printable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return false;
            }
        }
        return s.length() <= 4096;
    }
}
