package dev.weft.dataplane.security;

/**
 * Why a sidecar has no certificate: a refusal by the control plane (its HTTP status and code, e.g. 401
 * {@code invalid-token}), or a reason found locally (an unreadable token file, an unreachable control plane).
 * The message says which, and what to do.
 */
public final class IdentityException extends RuntimeException {
    /** The control plane's HTTP status, or 0 when it did not answer. */
    private final int status;

    public IdentityException(int status, String message) {
        super(message);
        this.status = status;
    }

    public IdentityException(String message, Throwable cause) {
        super(message, cause);
        this.status = 0;
    }

    public int status() {
        return status;
    }

    /** The control plane answered and said no: asking again with the same credentials gets the same answer. */
    public boolean refused() {
        return status >= 400 && status < 500;
    }
}
