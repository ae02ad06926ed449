package dev.weft.dataplane.http;

/**
 * What Weft's HTTP/1.1 decoders pass up the pipeline, in order, for each message:
 * <ol>
 *   <li>a head: {@link RequestHead} ({@link Http1RequestDecoder}) or {@link ResponseHead}
 *       ({@link Http1ResponseDecoder});</li>
 *   <li>zero or more {@code ByteBuf}s of body, de-chunked (the receiver owns and releases each);</li>
 *   <li>{@link #END}, once the body is complete (at once for a message without a body). Trailer fields are
 *       validated and dropped.</li>
 * </ol>
 * or, instead of any of these, one {@link Rejected} after which the decoder passes nothing more on (the framing
 * of the connection can no longer be trusted: the receiver answers and closes).
 */
public final class Http1Messages {
    private Http1Messages() {}

    /** The message's body is complete. A singleton: compare with {@code ==}. */
    public static final Object END = new Object() {
        @Override
        public String toString() {
            return "END";
        }
    };

    /**
     * The input broke a rule; nothing of it may be forwarded.
     *
     * @param status  the status to answer with: 400, 408, 414 or 431 for requests; 502 for answers
     * @param kind    the {@code x-weft-error} kind, e.g. {@code bad-request}, {@code conflicting-framing},
     *                {@code headers-too-large}, {@code uri-too-long}, {@code request-timeout},
     *                {@code app-protocol-error}
     * @param message what was wrong and what was expected, shown to the client
     */
    public record Rejected(int status, String kind, String message) {}
}
