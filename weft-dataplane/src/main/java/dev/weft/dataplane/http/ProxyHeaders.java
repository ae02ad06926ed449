package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Header rules a proxy must follow when it carries a message to the next hop: hop-by-hop fields ({@link #isHopByHop},
 * plus any named in Connection) stay on their hop, and so do those addressed to this proxy (Proxy-Authorization,
 * Expect); Host travels as the authority, not as a field; Content-Length is
 * kept (it is end to end, and lets the next hop send a fixed-length body), while each hop's codec writes its own
 * framing; X-Forwarded-For and Via record the path.
 *
 * <p>The rules edit the message's own field list in place (names are lower case: WMP's decoder and Weft's HTTP/1.1
 * decoders both make them so): no second list is made per message. Thread: any; stateless.
 */
public final class ProxyHeaders {
    public static final String VIA_VALUE = "1.1 weft";
    /** Via as the mesh's second sidecar forwards it (the first one's entry, then its own): a constant. */
    private static final String VIA_TWICE = VIA_VALUE + ", " + VIA_VALUE;

    private ProxyHeaders() {}

    /**
     * The hop-by-hop names: the connection-specific fields of RFC 9110 §7.6.1 and HTTP/1.1's framing, which belong to
     * the connection they came on (names lower case). The one list for the forwarding rules here and for both WMP
     * boundaries, which refuse these as literal fields (docs/protocol.md, "Header fields"): framing is WMP's own.
     */
    public static boolean isHopByHop(String name) {
        return switch (name) {
            case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade" ->
                    true;
            default -> false;
        };
    }

    /**
     * Fields addressed to this proxy rather than to the next hop, so not forwarded either: the proxy credentials and
     * challenge of RFC 9110 §11.7, and Expect, which the sidecar answers itself (its own 100 Continue). Not
     * hop-by-hop: a peer that sends one has broken no rule, so the WMP boundaries let them through to be dropped here.
     */
    private static boolean isForThisProxy(String name) {
        return switch (name) {
            case "proxy-authenticate", "proxy-authorization", "expect" -> true;
            default -> false;
        };
    }

    /**
     * Drops every {@code x-weft-*} field of an app's answer: those are the mesh's own signals (an error kind, "nothing
     * reached an app", a caller's name), set only by the sidecar that made the decision, and an app must not be able
     * to speak for the mesh (issue 13). Nothing is allocated when there is none, which is every answer of a sane app.
     */
    public static void dropMeshFields(WmpHeaders f) {
        int i = 0;
        while (i < f.size()) {
            if (f.name(i).startsWith(MESH_PREFIX)) {
                f.removeAt(i);
            } else {
                i++;
            }
        }
    }

    private static final String MESH_PREFIX = "x-weft-";

    /**
     * Makes a request's fields those to send to the next hop, once: hop-by-hop fields and those named in Connection
     * are dropped, {@code clientAddress} (when not null) is appended to X-Forwarded-For, and this hop to Via. A
     * retry sends the same head again: its fields were made ready by the first attempt and are not edited twice
     * (which would name this hop twice in Via).
     *
     * @param clientAddress the original client's address, or null on the mesh's second hop
     * @return the head's own field list, ready for the next hop
     */
    public static WmpHeaders forwardRequest(RequestHead head, String clientAddress) {
        if (!head.forwarded()) {
            forward(head.fields(), true, clientAddress);
            head.forwarded(true);
        }
        return head.fields();
    }

    /** Makes an answer's fields those to send to the next hop: hop-by-hop fields dropped, this hop added to Via. */
    public static void forwardAnswer(ResponseHead head) {
        forward(head.fields(), false, null);
    }

    private static void forward(WmpHeaders f, boolean request, String clientAddress) {
        Set<String> connectionTokens = connectionTokens(f.get("connection"));
        String xff = null;
        String via = null;
        int i = 0;
        while (i < f.size()) {
            String name = f.name(i);
            boolean drop = isHopByHop(name) || isForThisProxy(name)
                    || (connectionTokens != null && connectionTokens.contains(name))
                    || (request && name.equals("host"));
            if (drop) {
                f.removeAt(i);
            } else if (name.equals("x-forwarded-for")) {
                xff = xff == null ? f.value(i) : xff + ", " + f.value(i);
                f.removeAt(i); // merged into the one X-Forwarded-For added at the end
            } else if (name.equals("via")) {
                via = via == null ? f.value(i) : via + ", " + f.value(i);
                f.removeAt(i); // likewise
            } else {
                i++;
            }
        }
        if (clientAddress != null) {
            xff = xff == null ? clientAddress : xff + ", " + clientAddress;
        }
        if (xff != null) {
            f.add("x-forwarded-for", xff);
        }
        f.add("via", via == null ? VIA_VALUE : via.equals(VIA_VALUE) ? VIA_TWICE : via + ", " + VIA_VALUE);
    }

    private static final Set<String> CLOSE_ONLY = Set.of("close");

    private static Set<String> connectionTokens(String c) {
        // The two usual values allocate nothing: keep-alive is hop-by-hop anyway, close names no other field.
        if (c == null || c.isEmpty() || c.equals("keep-alive")) {
            return null;
        }
        if (c.equals("close")) {
            return CLOSE_ONLY;
        }
        Set<String> tokens = new HashSet<>();
        for (String t : c.split(",")) {
            String s = t.trim().toLowerCase(Locale.ROOT);
            if (!s.isEmpty()) {
                tokens.add(s);
            }
        }
        return tokens;
    }
}
