package dev.weft.dataplane.balancing;

/** The registry has no live endpoint for the destination (a typo, or every instance is down). */
public final class UnknownServiceException extends NoCapacityException {
    public UnknownServiceException(String service) {
        super("unknown service '" + service + "': no live endpoint is registered for it");
    }
}
