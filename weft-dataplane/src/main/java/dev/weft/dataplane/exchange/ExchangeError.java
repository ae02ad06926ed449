package dev.weft.dataplane.exchange;

/**
 * Why the mesh itself ended an exchange, in one type for both directions and every phase: the status the caller is
 * told, the {@code x-weft-error} kind that names which hop refused and why, and whether the request reached no app
 * ({@code unprocessed}: then the caller's sidecar may safely send it elsewhere, whatever its method).
 *
 * <p>Immutable; made only on the error path, so the hot path pays nothing for it. Has no stack trace: the message
 * says what happened, and a trace would cost more than the answer.
 */
public final class ExchangeError extends Exception {
    private final int status;
    private final String kind;
    private final boolean unprocessed;
    private final long retryAfterSeconds;

    public ExchangeError(int status, String kind, String message, boolean unprocessed) {
        this(status, kind, message, unprocessed, 0);
    }

    /** @param retryAfterSeconds sent as Retry-After when positive (429) */
    public ExchangeError(int status, String kind, String message, boolean unprocessed, long retryAfterSeconds) {
        super(message, null, false, false);
        this.status = status;
        this.kind = kind;
        this.unprocessed = unprocessed;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public int status() {
        return status;
    }

    /** The {@code x-weft-error} value. */
    public String kind() {
        return kind;
    }

    /** Nothing of the request reached an app: safe to retry on another instance. */
    public boolean unprocessed() {
        return unprocessed;
    }

    /** Seconds for Retry-After, 0 for none. */
    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    @Override
    public String toString() {
        return status + " " + kind + ": " + getMessage();
    }
}
