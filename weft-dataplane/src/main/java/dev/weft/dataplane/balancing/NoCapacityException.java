package dev.weft.dataplane.balancing;

/**
 * Why a request could not be admitted to a service's endpoints; the message is shown to the client with a 503. Made
 * without a stack trace: it is an answer, not a bug, and under overload one is made per refused request.
 */
public class NoCapacityException extends Exception {
    public NoCapacityException(String message) {
        super(message, null, false, false);
    }

    /** The {@code x-weft-error} the client is told. */
    public String kind() {
        return "no-capacity";
    }
}
