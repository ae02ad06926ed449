package dev.weft.bench;

/** The experiment could not run: a process did not start, did not become ready, or could not bind its port. */
public final class ExperimentException extends Exception {
    public ExperimentException(String message) {
        super(message);
    }

    public ExperimentException(String message, Throwable cause) {
        super(message, cause);
    }
}
