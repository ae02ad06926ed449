package dev.weft.dataplane.metrics;

import java.util.concurrent.atomic.LongAdder;

/**
 * {@code weft_rejected_total{boundary,reason}}: input a sidecar refused at one of its boundaries, by what was wrong
 * with it. One fixed counter per {@link Reason}, so counting a refusal allocates nothing and a peer cannot grow the
 * label set. Written by every Worker (LongAdders); read by the admin server.
 */
public final class Rejections {
    /** Where the input crossed into the sidecar. */
    public static final String WMP_TO_PROVIDER = "wmp_to_provider";
    /** The WMP connection itself (stream rules of docs/protocol.md), on either side. */
    public static final String WMP_CONNECTION = "wmp_connection";
    /** A peer's answer (RESPONSE and its DATA) on the consumer side, before it becomes HTTP/1.1 for the client. */
    public static final String WMP_ANSWER = "wmp_answer";

    /** What was refused; each value is one {@code boundary}/{@code reason} pair. */
    public enum Reason {
        /** A REQUEST's method is not an RFC 9110 token, or is CONNECT (no authority-form target over WMP). */
        BAD_METHOD(WMP_TO_PROVIDER, "bad_method"),
        /** A REQUEST's path is not origin form ({@code /...} in visible ASCII), nor {@code *} for OPTIONS. */
        BAD_TARGET(WMP_TO_PROVIDER, "bad_target"),
        /** A REQUEST's authority is not host[:port]. */
        BAD_AUTHORITY(WMP_TO_PROVIDER, "bad_authority"),
        /** A field name that is not an RFC 9110 token (a trailing space, a control byte...). */
        BAD_FIELD_NAME(WMP_TO_PROVIDER, "bad_field_name"),
        /** A field value with a control byte other than HTAB, a character above U+00FF, or edge whitespace. */
        BAD_FIELD_VALUE(WMP_TO_PROVIDER, "bad_field_value"),
        /** host, transfer-encoding, connection or another hop-by-hop name sent as a literal field. */
        FRAMING_FIELD(WMP_TO_PROVIDER, "framing_field"),
        /** content-length that is not one decimal number, or that the stream's body bytes contradict. */
        BAD_CONTENT_LENGTH(WMP_TO_PROVIDER, "bad_content_length"),
        /** A REQUEST with an even id, an id not above the previous one, or sent to the side that dialled. */
        STREAM_ID(WMP_CONNECTION, "stream_id"),
        /** A second REQUEST on a stream that is open. */
        SECOND_REQUEST(WMP_CONNECTION, "second_request"),
        /** RESPONSE, DATA, CANCEL or WINDOW_UPDATE for a stream id that was never opened. */
        UNOPENED_STREAM(WMP_CONNECTION, "unopened_stream"),
        /** DATA after the sender's END_STREAM on a stream still open: that stream is reset, the connection carries on. */
        DATA_AFTER_END(WMP_CONNECTION, "data_after_end"),
        /** A WINDOW_UPDATE that would grow a stream's send window past 2^31-1: that stream is reset. */
        FLOW_CONTROL(WMP_CONNECTION, "flow_control"),
        /** An answer's status is not a final one (200..599): interim answers and 101 stay on the app's hop. */
        ANSWER_BAD_STATUS(WMP_ANSWER, "bad_status"),
        /** An answer's field name that is not a lower-case RFC 9110 token. */
        ANSWER_BAD_FIELD_NAME(WMP_ANSWER, "bad_field_name"),
        /** An answer's field value with a control byte but HTAB, a character above U+00FF, or edge whitespace. */
        ANSWER_BAD_FIELD_VALUE(WMP_ANSWER, "bad_field_value"),
        /** A hop-by-hop name (transfer-encoding, connection...) as a literal field of an answer. */
        ANSWER_FRAMING_FIELD(WMP_ANSWER, "framing_field"),
        /** An answer's content-length that is not one decimal number, or that its body bytes contradict. */
        ANSWER_BAD_CONTENT_LENGTH(WMP_ANSWER, "bad_content_length");

        private final String boundary;
        private final String label;

        Reason(String boundary, String label) {
            this.boundary = boundary;
            this.label = label;
        }

        public String boundary() {
            return boundary;
        }

        public String label() {
            return label;
        }
    }

    private final LongAdder[] counts = new LongAdder[Reason.values().length];

    public Rejections() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    public void increment(Reason reason) {
        counts[reason.ordinal()].increment();
    }

    /** How many were refused for {@code reason} so far. */
    public long count(Reason reason) {
        return counts[reason.ordinal()].sum();
    }

    /** Writes every pair, zeros included, so a dashboard sees each series from the start. */
    public void render(PrometheusText p) {
        String help = "Input refused at a sidecar boundary, by boundary and reason (nothing of it was forwarded).";
        for (Reason r : Reason.values()) {
            p.counter("weft_rejected_total", help, count(r), "boundary", r.boundary(), "reason", r.label());
        }
    }
}
