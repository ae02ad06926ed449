package dev.weft.dataplane.balancing;

/**
 * Refused at once by the adaptive concurrency limit in front of the local app: nothing reached the app, so the
 * caller's sidecar may safely try another instance.
 */
public final class ShedException extends NoCapacityException {
    /** The {@code x-weft-error} of a shed answer. */
    public static final String KIND = "inbound-limit";

    public ShedException(int limit) {
        super("weft: inbound concurrency limit " + limit + " reached");
    }

    @Override
    public String kind() {
        return KIND;
    }
}
