package dev.weft.control.diagnose;

import java.util.List;
import java.util.StringJoiner;

/** Hand-built spans as the sidecars' Zipkin v2 JSON (the fields docs/observability.md lists). */
final class ZipkinJson {
    private ZipkinJson() {}

    static String of(List<List<DiagnoseSpan>> traces) {
        StringJoiner all = new StringJoiner(",", "[", "]");
        for (List<DiagnoseSpan> t : traces) {
            for (DiagnoseSpan s : t) {
                all.add(span(s));
            }
        }
        return all.toString();
    }

    static String span(DiagnoseSpan s) {
        StringBuilder j = new StringBuilder("{\"traceId\":\"").append(s.traceId()).append("\",\"id\":\"").append(s.id()).append('"');
        if (s.parentId() != null) {
            j.append(",\"parentId\":\"").append(s.parentId()).append('"');
        }
        j.append(",\"kind\":\"").append(s.client() ? "CLIENT" : "SERVER").append("\",\"name\":\"post\"")
                .append(",\"timestamp\":").append(s.startMicros()).append(",\"duration\":").append(s.durationMicros())
                .append(",\"localEndpoint\":{\"serviceName\":\"").append(s.service()).append("\"}");
        if (s.remoteService() != null) {
            j.append(",\"remoteEndpoint\":{\"serviceName\":\"").append(s.remoteService()).append("\"}");
        }
        j.append(",\"annotations\":[");
        if (s.admittedMicros() > 0) {
            j.append("{\"timestamp\":").append(s.admittedMicros()).append(",\"value\":\"admitted\"}");
        }
        j.append("],\"tags\":{\"http.method\":\"POST\",\"http.path\":\"/\",\"http.status_code\":\"").append(s.status()).append('"');
        if (s.endpoint() != null) {
            j.append(",\"weft.endpoint\":\"").append(s.endpointId()).append("\",\"weft.endpoint.address\":\"")
                    .append(s.endpoint()).append('"');
        }
        if (s.error() != null) {
            j.append(",\"error\":\"").append(s.error()).append('"');
        }
        return j.append("}}").toString();
    }
}
