package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Header rules a proxy must follow when it carries HTTP/1.1 across the mesh: hop-by-hop headers (RFC 9110 §7.6.1,
 * plus any named in Connection) stay on their hop; Host becomes the WMP authority; framing headers are rebuilt by
 * the receiving side; X-Forwarded-For and Via record the path.
 */
public final class ProxyHeaders {
    public static final String VIA_VALUE = "1.1 weft";

    private static final Set<String> HOP_BY_HOP = Set.of(
            "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
            "proxy-authenticate", "proxy-authorization", "expect");

    private static final int LOWER_CACHE_MAX = 512;
    /** Header name as received → lower case; shared by all Workers, bounded. */
    private static final ConcurrentHashMap<String, String> LOWER = new ConcurrentHashMap<>();
    /** The same for names that arrive as AsciiString (answers from Netty's decoder); bounded alike. */
    private static final ConcurrentHashMap<AsciiString, String> LOWER_ASCII = new ConcurrentHashMap<>();

    private ProxyHeaders() {}

    /** Receives the headers to forward; lets one filter feed either a WMP header list or HTTP/1.1 headers. */
    @FunctionalInterface
    public interface Sink {
        void add(String name, String value);
    }

    /**
     * Passes the end-to-end headers of an HTTP/1.1 message to {@code sink}, as a proxy hop must: hop-by-hop headers
     * and those named in Connection are dropped; Host is dropped from requests because it travels as the authority;
     * Content-Length is kept (it is end to end and lets the next hop send a fixed-length body); this hop is added to
     * Via, and for requests the client's address to X-Forwarded-For. Names are lower-cased.
     */
    public static void forward(HttpHeaders in, boolean request, String clientAddress, Sink sink) {
        Filter f = new Filter(connectionTokens(in.get(HttpHeaderNames.CONNECTION)), request, sink);
        for (Map.Entry<CharSequence, CharSequence> e : iterable(in)) {
            f.accept(lower(e.getKey()), e.getValue());
        }
        f.finish(request ? clientAddress : null);
    }

    /**
     * The same rules over a WMP header list (names already lower case: WMP's decoder and Weft's HTTP/1.1 decoder
     * both make them so), into a new list for the next hop: a request's Host is not in the list (it travels as the
     * authority).
     */
    public static WmpHeaders forward(WmpHeaders in, boolean request, String clientAddress) {
        WmpHeaders out = new WmpHeaders(in.size() + 2);
        Filter f = new Filter(connectionTokens(in.get("connection")), request, out::add);
        for (int i = 0; i < in.size(); i++) {
            f.accept(in.name(i), in.value(i));
        }
        f.finish(request ? clientAddress : null);
        return out;
    }

    /** One pass of the forwarding rules over a message's headers; see {@link #forward}. */
    private static final class Filter {
        private final Set<String> connectionTokens;
        private final boolean request;
        private final Sink sink;
        private String xff;
        private String via;

        Filter(Set<String> connectionTokens, boolean request, Sink sink) {
            this.connectionTokens = connectionTokens;
            this.request = request;
            this.sink = sink;
        }

        void accept(String name, CharSequence value) {
            if (HOP_BY_HOP.contains(name) || (connectionTokens != null && connectionTokens.contains(name))) {
                return;
            }
            if (request && name.equals("host")) {
                return;
            }
            if (name.equals("x-forwarded-for")) {
                xff = xff == null ? value.toString() : xff + ", " + value;
                return;
            }
            if (name.equals("via")) {
                via = via == null ? value.toString() : via + ", " + value;
                return;
            }
            sink.add(name, value.toString());
        }

        void finish(String clientAddress) {
            if (clientAddress != null) {
                sink.add("x-forwarded-for", xff == null ? clientAddress : xff + ", " + clientAddress);
            } else if (xff != null) {
                sink.add("x-forwarded-for", xff);
            }
            sink.add("via", via == null ? VIA_VALUE : via + ", " + VIA_VALUE);
        }
    }

    /** The forwarded headers as WMP headers. */
    public static WmpHeaders toWmp(HttpHeaders in, boolean request, String clientAddress) {
        WmpHeaders out = new WmpHeaders(in.size() + 2);
        forward(in, request, clientAddress, out::add);
        return out;
    }

    private static Iterable<Map.Entry<CharSequence, CharSequence>> iterable(HttpHeaders h) {
        return h::iteratorCharSequence;
    }

    /** Copies WMP headers onto an HTTP/1.1 message being built for the next hop. */
    public static void toHttp(WmpHeaders in, HttpHeaders out) {
        for (int i = 0; i < in.size(); i++) {
            out.add(in.name(i), in.value(i));
        }
    }

    private static Set<String> connectionTokens(String c) {
        if (c == null || c.isEmpty()) {
            return null;
        }
        Set<String> tokens = new java.util.HashSet<>();
        for (String t : c.split(",")) {
            String s = t.trim().toLowerCase(Locale.ROOT);
            if (!s.isEmpty()) {
                tokens.add(s);
            }
        }
        return tokens;
    }

    /**
     * The lower-case form of a header name. Clients send the same few names on every request ("Host",
     * "Content-Length"...), so their lower-case Strings are kept: a request then costs no new String per header.
     * The cache stops growing at {@link #LOWER_CACHE_MAX} names, so random names cannot grow memory.
     */
    private static String lower(CharSequence name) {
        if (name instanceof AsciiString a) {
            // Netty's response decoder names headers with AsciiStrings: look them up as they are, so that a known
            // name costs no String at all (AsciiString hashes its bytes; equal bytes are equal keys).
            String cached = LOWER_ASCII.get(a);
            if (cached != null) {
                return cached;
            }
            String l = a.toString().toLowerCase(Locale.ROOT);
            if (LOWER_ASCII.size() < LOWER_CACHE_MAX) {
                LOWER_ASCII.putIfAbsent(a, l);
            }
            return l;
        }
        String s = name.toString();
        String cached = LOWER.get(s);
        if (cached != null) {
            return cached;
        }
        String l = s.toLowerCase(Locale.ROOT); // the same instance when already lower case
        if (l != s && LOWER.size() < LOWER_CACHE_MAX) {
            LOWER.putIfAbsent(s, l);
        }
        return l;
    }
}
