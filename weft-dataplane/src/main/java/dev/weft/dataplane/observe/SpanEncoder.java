package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;

import java.util.List;

/**
 * Encodes a batch of finished exchanges as spans: Zipkin v2 JSON ({@code POST /api/v2/spans}) or OTLP/HTTP JSON
 * ({@code POST /v1/traces}). One span per sidecar side of an RPC: {@code CLIENT} for the outbound side, {@code SERVER}
 * for the inbound side, with the steps as annotations (OTLP: events) named {@value #ADMITTED}, {@value #CONNECTED},
 * {@value #SENT} and {@value #FIRST_BYTE}; the span's end is the last answer byte. docs/observability.md lists every
 * attribute.
 *
 * <p>Runs on the exporter thread only.
 */
abstract class SpanEncoder {
    static final String ADMITTED = "admitted";
    static final String CONNECTED = "connected";
    static final String SENT = "sent";
    static final String FIRST_BYTE = "first-byte";
    /**
     * Tag (OTLP: attribute) on a span exported because its exchange failed though its trace was not sampled, with the
     * value {@value #ERROR_ONLY}: it stands alone (its trace's other spans were not exported), and it is not a sample
     * of the traffic, so rates and percentiles over spans (the control plane's diagnosis) leave it out.
     */
    static final String SAMPLING = "weft.sampling";
    static final String ERROR_ONLY = "error";
    /** Long paths are cut: a span is a diagnosis aid, not an archive of query strings. */
    static final int MAX_PATH = 256;

    /** Reused for every span: an encoder belongs to one exporter thread. */
    final Address address = new Address();

    abstract String contentType();

    /** Encodes {@code batch} into {@code out} (reset first), allocating nothing per span. */
    abstract void encode(List<ObservedExchange> batch, JsonText out);

    /** The batch as a String: for tests and tools; the exporter uses {@link #encode(List, JsonText)}. */
    final String encode(List<ObservedExchange> batch) {
        JsonText out = new JsonText(batch.size() * 800);
        encode(batch, out);
        return out.toString();
    }

    static SpanEncoder named(String format) {
        return switch (format) {
            case "zipkin" -> new Zipkin();
            case "otlp" -> new Otlp();
            default -> throw new IllegalArgumentException("unknown trace format '" + format + "' (expected: zipkin, otlp)");
        };
    }

    /** The span's name: the method, then the route when one matched ({@code GET orders}). */
    static void spanName(JsonText j, ObservedExchange x, boolean lower) {
        boolean routed = !RouteTable.DEFAULT.equals(x.route);
        if (lower) {
            if (routed) {
                j.lowerValue(x.method, x.route);
            } else {
                j.lowerValue(x.method);
            }
        } else {
            j.value(routed ? x.method + " " + x.route : x.method);
        }
    }

    /** The path without its query string (which may carry secrets), cut to {@link #MAX_PATH}. */
    static void path(JsonText j, ObservedExchange x) {
        String p = x.path;
        int end = p.indexOf('?');
        if (end < 0) {
            end = p.length();
        }
        j.value(p, 0, Math.min(end, MAX_PATH));
    }

    /**
     * Where host and port sit in "host:port", "/1.2.3.4:5", "name/1.2.3.4:5" (InetSocketAddress.toString) or
     * "[::1]:5": found by index so that a span costs no substrings. {@link #valid} is false when there is no port.
     * One instance per encoder thread, reused.
     */
    static final class Address {
        String text;
        int hostFrom;
        int hostTo;
        int port;
        boolean valid;

        Address parse(String address) {
            text = address;
            valid = false;
            if (address == null) {
                return this;
            }
            int from = address.lastIndexOf('/') + 1;
            int colon = address.lastIndexOf(':');
            if (colon <= from || colon == address.length() - 1) {
                return this;
            }
            int to = colon;
            if (address.charAt(from) == '[' && address.charAt(to - 1) == ']') {
                from++;
                to--;
            }
            int p = 0;
            for (int i = colon + 1; i < address.length(); i++) {
                char c = address.charAt(i);
                if (c < '0' || c > '9' || p > 65535) {
                    p = -1;
                    break;
                }
                p = p * 10 + (c - '0');
            }
            hostFrom = from;
            hostTo = to;
            port = p;
            valid = true;
            return this;
        }

        boolean isIpv4() {
            int dots = 0;
            for (int i = hostFrom; i < hostTo; i++) {
                char c = text.charAt(i);
                if (c == '.') {
                    dots++;
                } else if (c < '0' || c > '9') {
                    return false;
                }
            }
            return dots == 3;
        }

        boolean isIpv6() {
            return text.indexOf(':', hostFrom) < hostTo;
        }
    }

    static String errorOf(ObservedExchange x) {
        if (x.error != null) {
            return x.error;
        }
        return x.status >= 500 ? String.valueOf(x.status) : null;
    }

    /** Zipkin v2: a JSON array of spans. */
    static final class Zipkin extends SpanEncoder {
        @Override
        String contentType() {
            return "application/json";
        }

        @Override
        void encode(List<ObservedExchange> batch, JsonText j) {
            j.reset().beginArray();
            for (ObservedExchange x : batch) {
                span(j, x);
            }
            j.endArray();
        }

        private void span(JsonText j, ObservedExchange x) {
            j.beginObject();
            j.name("traceId").hexValue(x.traceHi, x.traceLo);
            if (x.parentId != 0) {
                j.name("parentId").hexValue(x.parentId);
            }
            j.name("id").hexValue(x.spanId);
            j.field("kind", x.direction == Direction.OUTBOUND ? "CLIENT" : "SERVER");
            spanName(j.name("name"), x, true);
            j.field("timestamp", x.startEpochMicros);
            j.field("duration", Math.max(1, x.durationMicros()));
            j.name("localEndpoint").beginObject().field("serviceName", x.localService).endObject();
            Address remote = address.parse(x.direction == Direction.OUTBOUND ? x.endpointAddress : x.peer);
            boolean remoteName = x.direction == Direction.OUTBOUND && !ObservedExchange.UNKNOWN.equals(x.destination);
            if (remote.valid || remoteName) {
                j.name("remoteEndpoint").beginObject();
                if (remoteName) {
                    j.field("serviceName", x.destination);
                }
                if (remote.valid) {
                    if (remote.isIpv4()) {
                        j.name("ipv4").value(remote.text, remote.hostFrom, remote.hostTo);
                    } else if (remote.isIpv6()) {
                        j.name("ipv6").value(remote.text, remote.hostFrom, remote.hostTo);
                    }
                    if (remote.port >= 0) {
                        j.field("port", remote.port); // a malformed port is left out; the tag below shows it
                    }
                }
                j.endObject();
            }
            j.name("annotations").beginArray();
            annotation(j, x, x.admittedNanos, ADMITTED);
            annotation(j, x, x.connectedNanos, CONNECTED);
            annotation(j, x, x.sentNanos, SENT);
            annotation(j, x, x.firstByteNanos, FIRST_BYTE);
            j.endArray();
            j.name("tags").beginObject();
            j.field("http.method", x.method);
            path(j.name("http.path"), x);
            j.name("http.status_code").quotedValue(x.status);
            j.field("weft.direction", x.direction == Direction.OUTBOUND ? "outbound" : "inbound");
            j.field("weft.route", x.route);
            if (x.endpointId != null) {
                j.field("weft.endpoint", x.endpointId);
                j.field("weft.endpoint.address", x.endpointAddress);
            }
            if (x.peer != null) {
                j.field("weft.peer", x.peer);
            }
            if (x.attempts > 1) {
                j.name("weft.attempts").quotedValue(x.attempts);
            }
            if (x.upstreamStatus != 0 && x.upstreamStatus != x.status) {
                j.name("weft.upstream.status_code").quotedValue(x.upstreamStatus);
            }
            j.name("weft.bytes_in").quotedValue(x.bytesIn);
            j.name("weft.bytes_out").quotedValue(x.bytesOut);
            String error = errorOf(x);
            if (error != null) {
                j.field("error", error);
            }
            if (x.error != null) {
                j.field("weft.error", x.error);
            }
            if (x.errorOnly()) {
                j.field(SAMPLING, ERROR_ONLY);
            }
            j.endObject();
            j.endObject();
        }

        private static void annotation(JsonText j, ObservedExchange x, long nanos, String value) {
            if (nanos != 0) {
                j.beginObject().field("timestamp", x.epochMicros(nanos)).field("value", value).endObject();
            }
        }
    }

    /** OTLP/HTTP with the JSON encoding: one resource (this sidecar's service), one scope, the batch's spans. */
    static final class Otlp extends SpanEncoder {
        private static final int KIND_SERVER = 2;
        private static final int KIND_CLIENT = 3;
        private static final int STATUS_ERROR = 2;

        @Override
        String contentType() {
            return "application/json";
        }

        @Override
        void encode(List<ObservedExchange> batch, JsonText j) {
            j.reset().beginObject().name("resourceSpans").beginArray().beginObject();
            j.name("resource").beginObject().name("attributes").beginArray();
            attr(j, "service.name", batch.isEmpty() ? "" : batch.getFirst().localService);
            j.endArray().endObject();
            j.name("scopeSpans").beginArray().beginObject();
            j.name("scope").beginObject().field("name", "weft").field("version", "0.1.0").endObject();
            j.name("spans").beginArray();
            for (ObservedExchange x : batch) {
                span(j, x);
            }
            j.endArray().endObject().endArray().endObject().endArray().endObject();
        }

        private void span(JsonText j, ObservedExchange x) {
            boolean outbound = x.direction == Direction.OUTBOUND;
            j.beginObject();
            j.name("traceId").hexValue(x.traceHi, x.traceLo);
            j.name("spanId").hexValue(x.spanId);
            if (x.parentId != 0) {
                j.name("parentSpanId").hexValue(x.parentId);
            }
            spanName(j.name("name"), x, false);
            j.field("kind", outbound ? KIND_CLIENT : KIND_SERVER);
            // int64 travels as a decimal string in OTLP/JSON.
            j.name("startTimeUnixNano").quotedValue(x.startEpochMicros, "000");
            j.name("endTimeUnixNano").quotedValue(x.startEpochMicros + Math.max(1, x.durationMicros()), "000");
            j.name("attributes").beginArray();
            attr(j, "http.request.method", x.method);
            j.beginObject().field("key", "url.path").name("value").beginObject();
            path(j.name("stringValue"), x);
            j.endObject().endObject();
            intAttr(j, "http.response.status_code", x.status);
            attr(j, "http.route", x.route);
            attr(j, "weft.direction", outbound ? "outbound" : "inbound");
            if (outbound && !ObservedExchange.UNKNOWN.equals(x.destination)) {
                attr(j, "peer.service", x.destination);
            }
            Address remote = address.parse(outbound ? x.endpointAddress : x.peer);
            if (remote.valid) {
                j.beginObject().field("key", outbound ? "server.address" : "client.address").name("value")
                        .beginObject().name("stringValue").value(remote.text, remote.hostFrom, remote.hostTo)
                        .endObject().endObject();
                if (remote.port >= 0) {
                    intAttr(j, outbound ? "server.port" : "client.port", remote.port);
                }
            }
            if (x.endpointId != null) {
                attr(j, "weft.endpoint", x.endpointId);
            }
            if (x.attempts > 1) {
                intAttr(j, "weft.attempts", x.attempts);
            }
            intAttr(j, "weft.bytes_in", x.bytesIn);
            intAttr(j, "weft.bytes_out", x.bytesOut);
            String error = errorOf(x);
            if (error != null) {
                attr(j, "error.type", error);
            }
            if (x.errorOnly()) {
                attr(j, SAMPLING, ERROR_ONLY);
            }
            j.endArray();
            j.name("events").beginArray();
            event(j, x, x.admittedNanos, ADMITTED);
            event(j, x, x.connectedNanos, CONNECTED);
            event(j, x, x.sentNanos, SENT);
            event(j, x, x.firstByteNanos, FIRST_BYTE);
            j.endArray();
            if (error != null) {
                j.name("status").beginObject().field("code", STATUS_ERROR).field("message", error).endObject();
            }
            j.endObject();
        }

        private static void event(JsonText j, ObservedExchange x, long nanos, String name) {
            if (nanos != 0) {
                j.beginObject().name("timeUnixNano").quotedValue(x.epochMicros(nanos), "000").field("name", name)
                        .endObject();
            }
        }

        private static void attr(JsonText j, String key, String value) {
            j.beginObject().field("key", key).name("value").beginObject().field("stringValue", value).endObject()
                    .endObject();
        }

        private static void intAttr(JsonText j, String key, long value) {
            j.beginObject().field("key", key).name("value").beginObject().name("intValue").quotedValue(value)
                    .endObject().endObject();
        }
    }
}
