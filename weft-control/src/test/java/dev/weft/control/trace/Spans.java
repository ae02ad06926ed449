package dev.weft.control.trace;

/** Zipkin v2 span JSON for tests. */
final class Spans {
    private Spans() {}

    /**
     * @param ts  epoch microseconds
     * @param dur microseconds
     */
    static String span(String traceId, String id, String parentId, String kind, String local, String remote, long ts,
                       long dur, boolean error) {
        return "{\"traceId\":\"" + traceId + "\",\"id\":\"" + id + "\""
                + (parentId == null ? "" : ",\"parentId\":\"" + parentId + "\"")
                + ",\"kind\":\"" + kind + "\",\"name\":\"post\",\"timestamp\":" + ts + ",\"duration\":" + dur
                + ",\"localEndpoint\":{\"serviceName\":\"" + local + "\"}"
                + (remote == null ? "" : ",\"remoteEndpoint\":{\"serviceName\":\"" + remote + "\",\"ipv4\":\"127.0.0.1\",\"port\":7001}")
                + ",\"annotations\":[{\"timestamp\":" + (ts + 10) + ",\"value\":\"admitted\"}]"
                + ",\"tags\":{\"http.method\":\"POST\",\"http.path\":\"/\",\"http.status_code\":\"" + (error ? "503" : "200") + "\""
                + (error ? ",\"error\":\"no-capacity\"" : "") + "}}";
    }

    static String array(String... spans) {
        return "[" + String.join(",", spans) + "]";
    }

    static String traceId(int n) {
        return String.format("%032x", n + 1);
    }

    static String spanId(int n) {
        return String.format("%016x", n + 1);
    }
}
