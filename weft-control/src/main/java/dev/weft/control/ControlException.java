package dev.weft.control;

/**
 * A request the control plane refuses, with the HTTP status it maps to and a stable machine-readable code.
 * Clients branch on {@link #code()} (e.g. "unknown-lease" means: take a new lease and register again), people
 * read the message, which names what was wrong and what was expected.
 */
final class ControlException extends RuntimeException {
    private final int status;
    private final String code;

    ControlException(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    static ControlException badRequest(String message) {
        return new ControlException(400, "bad-request", message);
    }

    static ControlException unknownLease(String leaseId) {
        return new ControlException(404, "unknown-lease", "unknown lease '" + leaseId
                + "' (it expired or was never granted; take a new one with PUT /v1/leases)");
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }
}
