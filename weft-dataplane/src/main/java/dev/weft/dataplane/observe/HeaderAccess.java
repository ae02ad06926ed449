package dev.weft.dataplane.observe;

import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;

/**
 * Read and write access to a request's headers, whether it arrived as HTTP/1.1 or as a WMP frame: Weft's
 * {@code RequestHead} is one, so that giving its headers to the observer costs no wrapper per request.
 */
public interface HeaderAccess {
    /** The first value of a field ({@code name} lower case), or null. */
    String get(String name);

    /** Replaces every value of a field with one ({@code name} lower case). */
    void set(String name, String value);

    /**
     * The fields themselves when they are a WMP header list (as Weft's request head holds them), so that a reader
     * of several names walks them once; null otherwise, and then only {@link #get} and {@link #set} are used.
     */
    default WmpHeaders fields() {
        return null;
    }

    /**
     * The request's {@code traceparent} when it is held as numbers beside the fields (Weft's request head: the
     * codecs write it as the field), else null; it then counts as the first {@code traceparent}, before any field.
     */
    default Traceparent traceparent() {
        return null;
    }

    /**
     * Holds {@code t} as the request's {@code traceparent} beside the fields, if these headers can (the caller then
     * removes any {@code traceparent} field); false if not, and the caller sets the field as text.
     */
    default boolean traceparent(Traceparent t) {
        return false;
    }
}
