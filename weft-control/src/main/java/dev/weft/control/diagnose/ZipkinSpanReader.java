package dev.weft.control.diagnose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.util.Locale;

/**
 * Reads one stored Zipkin v2 span (its JSON, as the store keeps it) into a {@link DiagnoseSpan}. The store validated
 * the ids and times when the span arrived; a span that is not a sidecar's (no kind, no service) is skipped, since
 * culprit finding needs both sides of each hop. So is a span a sidecar exported only because its exchange failed
 * while its trace was not sampled (tag {@value #SAMPLING} = {@code error}): it stands alone, and since every failure
 * may be exported so but only a sample of the successes, counting it would inflate error rates and skew percentiles.
 * The sampled spans are a sample independent of how exchanges end (decided as each request arrives), so shares and
 * percentiles over them hold.
 *
 * <p>Threads: any (stateless apart from the thread-safe mapper).
 */
final class ZipkinSpanReader {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The sidecars' tag for a span exported for its error alone (dataplane {@code observe/SpanEncoder}). */
    static final String SAMPLING = "weft.sampling";

    private ZipkinSpanReader() {}

    /** The span, or null when it cannot take part in the analysis (not a CLIENT/SERVER span of a named service). */
    static DiagnoseSpan read(byte[] json) {
        JsonNode n;
        try {
            n = JSON.readTree(json);
        } catch (IOException e) {
            return null; // the store parsed it already; a span it kept and this cannot read is skipped, not fatal
        }
        String kind = text(n, "kind");
        String service = text(n.path("localEndpoint"), "serviceName");
        String traceId = text(n, "traceId");
        String id = text(n, "id");
        if (kind == null || service == null || traceId == null || id == null
                || !(kind.equals("CLIENT") || kind.equals("SERVER"))) {
            return null;
        }
        long admitted = 0;
        for (JsonNode a : n.path("annotations")) {
            if ("admitted".equals(a.path("value").asText())) {
                admitted = a.path("timestamp").asLong();
            }
        }
        JsonNode tags = n.path("tags");
        if ("error".equals(text(tags, SAMPLING))) {
            return null;
        }
        int status = 0;
        try {
            status = Integer.parseInt(tags.path("http.status_code").asText("0"));
        } catch (NumberFormatException e) {
            // left 0: unknown
        }
        // Zipkin ids: 16 zeros ahead of a 64-bit id name the same trace as the id alone (as in the store).
        String trace = traceId.toLowerCase(Locale.ROOT);
        if (trace.length() == 32 && trace.startsWith("0000000000000000")) {
            trace = trace.substring(16);
        }
        return new DiagnoseSpan(trace, id.toLowerCase(Locale.ROOT), lower(text(n, "parentId")),
                kind.equals("CLIENT"), service.toLowerCase(Locale.ROOT),
                lower(text(n.path("remoteEndpoint"), "serviceName")), n.path("timestamp").asLong(),
                Math.max(1, n.path("duration").asLong()), admitted, status, text(tags, "error"),
                address(text(tags, "weft.endpoint.address")), text(tags, "weft.endpoint"));
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() || v.asText().isEmpty() ? null : v.asText();
    }

    /** "host:port" of an address tag, which may read "/127.0.0.1:7003" or "name/127.0.0.1:7003" (a socket address). */
    static String address(String tag) {
        return tag == null ? null : tag.substring(tag.lastIndexOf('/') + 1);
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(Locale.ROOT);
    }
}
