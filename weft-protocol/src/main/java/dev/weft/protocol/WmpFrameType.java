package dev.weft.protocol;

/** Frame types and their wire codes. Codes are part of the protocol: never renumber, only add. */
public enum WmpFrameType {
    REQUEST(1),
    RESPONSE(2),
    DATA(3),
    PING(4),
    PONG(5),
    CANCEL(6),
    GOAWAY(7),
    WINDOW_UPDATE(8);

    private static final WmpFrameType[] BY_CODE = new WmpFrameType[16];

    static {
        for (WmpFrameType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    WmpFrameType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** Returns the type for a wire code, or null if the code is unknown. */
    public static WmpFrameType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
