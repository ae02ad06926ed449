package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

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

    private ProxyHeaders() {}

    /**
     * Copies end-to-end headers of an HTTP/1.1 message into WMP headers. Content-Length is kept (it is end to end
     * and lets the receiver answer with a fixed-length body); Host is dropped because it travels as the authority.
     */
    public static WmpHeaders toWmp(HttpHeaders in, boolean request, String clientAddress) {
        Set<String> connectionTokens = connectionTokens(in);
        WmpHeaders out = new WmpHeaders(in.size() + 2);
        String xff = null;
        String via = null;
        for (Map.Entry<CharSequence, CharSequence> e : iterable(in)) {
            String name = lower(e.getKey());
            if (HOP_BY_HOP.contains(name) || (connectionTokens != null && connectionTokens.contains(name))) {
                continue;
            }
            if (request && name.equals("host")) {
                continue;
            }
            if (name.equals("x-forwarded-for")) {
                xff = xff == null ? e.getValue().toString() : xff + ", " + e.getValue();
                continue;
            }
            if (name.equals("via")) {
                via = via == null ? e.getValue().toString() : via + ", " + e.getValue();
                continue;
            }
            out.add(name, e.getValue().toString());
        }
        if (request && clientAddress != null) {
            out.add("x-forwarded-for", xff == null ? clientAddress : xff + ", " + clientAddress);
        } else if (xff != null) {
            out.add("x-forwarded-for", xff);
        }
        out.add("via", via == null ? VIA_VALUE : via + ", " + VIA_VALUE);
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

    private static Set<String> connectionTokens(HttpHeaders in) {
        String c = in.get(HttpHeaderNames.CONNECTION);
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

    private static String lower(CharSequence name) {
        if (name instanceof AsciiString a) {
            return a.toLowerCase().toString();
        }
        return name.toString().toLowerCase(Locale.ROOT);
    }
}
