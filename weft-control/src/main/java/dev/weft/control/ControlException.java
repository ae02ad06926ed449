package dev.weft.control;

/**
 * A request the control plane refuses, with the HTTP status it maps to and a stable machine-readable code.
 * Clients branch on {@link #code()} (e.g. "unknown-lease" means: take a new lease and register again), people
 * read the message, which names what was wrong and what was expected. A {@link ControlBackend} fails an operation
 * with one to choose the answer; 503 "registry-unavailable" means the backend's store did not answer.
 */
public final class ControlException extends RuntimeException {
    private final int status;
    private final String code;

    public ControlException(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    public static ControlException badRequest(String message) {
        return new ControlException(400, "bad-request", message);
    }

    public static ControlException unknownLease(String leaseId) {
        return new ControlException(404, "unknown-lease", "unknown lease '" + leaseId
                + "' (it expired or was never granted; take a new one with PUT /v1/leases)");
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }
}
