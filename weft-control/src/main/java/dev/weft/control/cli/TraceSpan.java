package dev.weft.control.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Zipkin v2 span as the trace commands read it back (from the control plane or a Zipkin server).
 *
 * @param timestamp epoch microseconds
 * @param duration  microseconds
 */
record TraceSpan(String traceId, String id, String parentId, String kind, String name, long timestamp, long duration,
                 String localService, String remoteService, Map<String, Long> annotations, Map<String, String> tags) {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    long end() {
        return timestamp + duration;
    }

    /** An {@code error} tag, or a 5xx status. */
    boolean failed() {
        if (tags.containsKey("error")) {
            return true;
        }
        String status = tags.get("http.status_code");
        return status != null && status.length() == 3 && status.charAt(0) == '5';
    }

    /**
     * Exported by its sidecar only because its exchange failed while its trace was not sampled ({@code weft.sampling:
     * error}, docs/observability.md "Sampling"): not a sample of the traffic, so rates leave it out.
     */
    boolean errorOnly() {
        return "error".equals(tags.get("weft.sampling"));
    }

    /** Time of a step annotation (admitted, connected, sent, first-byte), or 0. */
    long at(String annotation) {
        return annotations.getOrDefault(annotation, 0L);
    }

    static List<TraceSpan> parseTrace(String json) throws IOException {
        return parseArray(MAPPER.readTree(json));
    }

    static List<List<TraceSpan>> parseTraces(String json) throws IOException {
        List<List<TraceSpan>> traces = new ArrayList<>();
        for (JsonNode trace : MAPPER.readTree(json)) {
            traces.add(parseArray(trace));
        }
        return traces;
    }

    private static List<TraceSpan> parseArray(JsonNode array) {
        List<TraceSpan> spans = new ArrayList<>();
        for (JsonNode n : array) {
            Map<String, Long> annotations = new LinkedHashMap<>();
            for (JsonNode a : n.path("annotations")) {
                annotations.putIfAbsent(a.path("value").asText(), a.path("timestamp").asLong());
            }
            Map<String, String> tags = new LinkedHashMap<>();
            n.path("tags").properties().forEach(e -> tags.put(e.getKey(), e.getValue().asText()));
            spans.add(new TraceSpan(n.path("traceId").asText(), n.path("id").asText(), text(n, "parentId"),
                    text(n, "kind"), text(n, "name"), n.path("timestamp").asLong(), n.path("duration").asLong(),
                    text(n.path("localEndpoint"), "serviceName"), text(n.path("remoteEndpoint"), "serviceName"),
                    annotations, tags));
        }
        return spans;
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}
