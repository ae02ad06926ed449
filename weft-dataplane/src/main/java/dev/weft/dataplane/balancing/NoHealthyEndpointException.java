package dev.weft.dataplane.balancing;

/**
 * Every endpoint of the service is down: ejected by outlier detection, or paused after its dial was refused (an
 * instance killed before its lease expired). Answered 503 {@code no-healthy-endpoint} at once, marked unprocessed,
 * instead of waiting in a queue that nothing can drain (see {@link Cluster}).
 */
public final class NoHealthyEndpointException extends NoCapacityException {
    public static final String KIND = "no-healthy-endpoint";

    public NoHealthyEndpointException(String service, int endpoints) {
        super("no healthy endpoint for service '" + service + "': all " + endpoints
                + " ejected or unreachable (each is tried again when its pause ends)");
    }

    @Override
    public String kind() {
        return KIND;
    }
}
