package dev.weft.dataplane.http;

import dev.weft.dataplane.observe.HeaderAccess;
import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;

/**
 * Weft's own request head, the same for every wire format: method, authority, path and the header fields as a WMP
 * header list (names lower case). The HTTP/1.1 decoder ({@link Http1RequestDecoder}) and the WMP decoder produce it;
 * only the codecs turn it into bytes. Host travels as {@link #authority()}, never as a field.
 *
 * <p>Framing ({@code content-length}, {@code transfer-encoding}) and {@code connection} stay in the list as received
 * so that the forwarding rules ({@link ProxyHeaders}) can see them; those rules then edit the list in place, before
 * the first attempt is sent, and the next hop's codec rebuilds its own framing.
 *
 * <p>The trace context may be held as numbers ({@link #traceparent()}), as observability writes it and the WMP
 * decoder reads it: it is then the request's {@code traceparent}, and the codecs write it as that field after the
 * others. {@link #get} and {@link #set} see it under that name as text.
 *
 * <p>Thread: one Worker loop at a time; not thread safe.
 */
public final class RequestHead implements HeaderAccess {
    private final String method;
    private final String path;
    private String authority;
    private final WmpHeaders fields;
    private boolean keepAlive = true;
    private boolean expectContinue;
    private boolean forwarded;
    private Traceparent traceparent;

    /**
     * @param method    the method token as received (case sensitive, RFC 9110 §9.1)
     * @param authority the Host (or WMP authority), or null when the request had none
     * @param path      the request target in origin form ({@code /path?query}), or {@code *} for {@code OPTIONS *}
     * @param fields    the header fields except Host, names lower case; owned by this head from now on
     */
    public RequestHead(String method, String authority, String path, WmpHeaders fields) {
        this.method = method;
        this.authority = authority;
        this.path = path;
        this.fields = fields;
    }

    public String method() {
        return method;
    }

    public String path() {
        return path;
    }

    /** Host, or null. */
    public String authority() {
        return authority;
    }

    public void authority(String authority) {
        this.authority = authority;
    }

    /** The fields themselves, to read or edit in place (observability walks them once: {@link HeaderAccess#fields}). */
    @Override
    public WmpHeaders fields() {
        return fields;
    }

    /** First value of a field ({@code lowerName} lower case), or null; a trace context held as numbers is first. */
    @Override
    public String get(String lowerName) {
        if (traceparent != null && lowerName.equals(Traceparent.NAME)) {
            return traceparent.toString();
        }
        return fields.get(lowerName);
    }

    /** Replaces every value of a field with one ({@code lowerName} lower case), the numbers' traceparent too. */
    @Override
    public void set(String lowerName, String value) {
        if (lowerName.equals(Traceparent.NAME)) {
            traceparent = null;
        }
        fields.set(lowerName, value);
    }

    /** The trace context held as numbers, or null: the codecs write it as the {@code traceparent} field. */
    @Override
    public Traceparent traceparent() {
        return traceparent;
    }

    /** Holds {@code t} (or none, for null) as the request's {@code traceparent}; the caller drops any such field. */
    @Override
    public boolean traceparent(Traceparent t) {
        traceparent = t;
        return true;
    }

    /** HTTP/1.1 only: whether the client's connection stays open after the answer (false for Connection: close). */
    public boolean keepAlive() {
        return keepAlive;
    }

    public RequestHead keepAlive(boolean keepAlive) {
        this.keepAlive = keepAlive;
        return this;
    }

    /** HTTP/1.1 only: the client sent {@code Expect: 100-continue} and waits for an interim answer. */
    public boolean expectContinue() {
        return expectContinue;
    }

    public RequestHead expectContinue(boolean expectContinue) {
        this.expectContinue = expectContinue;
        return this;
    }

    /** Whether the forwarding rules already made the fields those for the next hop ({@link ProxyHeaders}). */
    public boolean forwarded() {
        return forwarded;
    }

    public void forwarded(boolean forwarded) {
        this.forwarded = forwarded;
    }

    /** Whether the method's answer never has a body (HEAD). */
    public boolean isHead() {
        return "HEAD".equals(method);
    }

    /** GET, HEAD, OPTIONS, PUT, DELETE and TRACE may be sent twice without a second effect (RFC 9110 §9.2.2). */
    public boolean idempotent() {
        return switch (method) {
            case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" -> true;
            default -> false;
        };
    }

    @Override
    public String toString() {
        return method + " " + path + " (authority " + authority + ") " + fields
                + (traceparent == null ? "" : " traceparent " + traceparent);
    }
}
