package dev.weft.protocol;

/** Error codes carried by CANCEL and GOAWAY. Codes are part of the protocol: never renumber, only add. */
public enum WmpError {
    NO_ERROR(0),
    PROTOCOL_ERROR(1),
    FRAME_TOO_LARGE(2),
    UNSUPPORTED_VERSION(3),
    CANCELLED(4),
    TIMEOUT(5),
    REFUSED_STREAM(6),
    INTERNAL_ERROR(7),
    FLOW_CONTROL_ERROR(8);

    private final int code;

    WmpError(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** Unknown codes map to INTERNAL_ERROR: a newer peer may send codes this version does not know. */
    public static WmpError fromCode(int code) {
        for (WmpError e : values()) {
            if (e.code == code) {
                return e;
            }
        }
        return INTERNAL_ERROR;
    }
}
